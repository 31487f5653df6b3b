package oauth

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/redisstore"
	"github.com/backupweb/backupweb/internal/testkit"
	"github.com/backupweb/backupweb/internal/testkit/logtest"
	"github.com/backupweb/backupweb/internal/testkit/redistest"
)

// paged answers a listing as GitHub's and GitLab's REST APIs do: per_page
// entries (default 30, at most 100) of page (default 1), and a Link
// header with absolute rel="next" and rel="last" addresses while pages
// remain. hits counts the requests.
func paged(entries []any, header http.Header, hits *atomic.Int32) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		q := r.URL.Query()
		size, _ := strconv.Atoi(q.Get("per_page"))
		if size <= 0 {
			size = 30
		}
		size = min(size, 100)
		page, _ := strconv.Atoi(q.Get("page"))
		page = max(page, 1)
		last := max((len(entries)+size-1)/size, 1)
		link := func(n int) string {
			u := url.URL{Scheme: "http", Host: r.Host, Path: r.URL.Path}
			q.Set("page", strconv.Itoa(n))
			u.RawQuery = q.Encode()
			return u.String()
		}
		if page < last {
			w.Header().Set("Link", fmt.Sprintf(`<%s>; rel="next", <%s>; rel="last"`, link(page+1), link(last)))
		}
		for k, v := range header {
			w.Header()[k] = v
		}
		from, to := min((page-1)*size, len(entries)), min(page*size, len(entries))
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		json.NewEncoder(w).Encode(entries[from:to])
	}
}

// ghOrgs are GitHub organisations as /user/orgs lists them: many, with
// "Acme" on the second page of 100.
func ghOrgs() []any {
	var orgs []any
	for i := range 150 {
		login := fmt.Sprintf("org-%03d", i)
		if i == 120 {
			login = "Acme"
		}
		orgs = append(orgs, map[string]any{"login": login, "id": i + 1, "url": "https://api.github.com/orgs/" + login, "description": nil})
	}
	return orgs
}

func ghTeam(org, slug string) any {
	return map[string]any{"id": 7, "name": slug, "slug": slug, "privacy": "closed", "permission": "pull",
		"organization": map[string]any{"login": org, "id": 1}}
}

// signedInUser is what the provider identifies from c's session cookie, as
// the next request c sends would be identified.
func (s *service) signedInUser(t *testing.T, c *http.Client) (auth.User, bool) {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, s.URL+"/api/me", nil)
	base, _ := url.Parse(s.URL)
	for _, ck := range c.Jar.Cookies(base) {
		req.AddCookie(ck)
	}
	u, ok, err := s.p.Identify(req)
	if err != nil {
		t.Fatalf("Identify: %v", err)
	}
	return u, ok
}

func TestGitHubGroups(t *testing.T) {
	f := newFakeAPI(t, "gh-secret")
	s := newService(t)
	granted := http.Header{"X-Oauth-Scopes": {"read:org, user:email"}, "X-Accepted-Oauth-Scopes": {"admin:org, read:org, write:org"}}
	teams := []any{ghTeam("Acme", "backup-ops"), ghTeam("other", "web")}
	var orgHits, teamHits atomic.Int32
	normal := func(f *fakeAPI) {
		f.routes = map[string]http.HandlerFunc{
			"/user/orgs":  paged(ghOrgs(), granted, &orgHits),
			"/user/teams": paged(teams, granted, &teamHits),
		}
	}
	tests := []struct {
		name   string
		rule   Rule
		scopes []string
		setup  func(f *fakeAPI)
		want   int
		groups []string // some of the groups the session must carry
		logged string
	}{
		{"organisation on the second page", Rule{Orgs: []string{"acme"}}, nil, normal, http.StatusOK,
			[]string{"acme", "acme/backup-ops", "org-000", "org-149", "other/web"}, ""},
		{"team, configured in capitals", Rule{Teams: []string{"ACME/Backup-Ops"}}, nil, normal, http.StatusOK, []string{"acme/backup-ops"}, ""},
		{"another team of the organisation", Rule{Teams: []string{"acme/db-admins"}}, nil, normal, http.StatusForbidden, nil, "none listed"},
		{"an organisation is not a team", Rule{Teams: []string{"acme/acme"}}, nil, normal, http.StatusForbidden, nil, "none listed"},
		{"listed organisation the account is not in", Rule{Orgs: []string{"initech"}}, nil, normal, http.StatusForbidden, nil, "152 groups from the provider, none listed"},
		{"a domain admits without any group", Rule{Orgs: []string{"initech"}, Domains: []string{"example.com"}}, nil, normal, http.StatusOK, []string{"acme"}, ""},
		{"token granted without read:org", Rule{Orgs: []string{"acme"}}, nil, func(f *fakeAPI) {
			// GitHub then lists public memberships only.
			f.routes = map[string]http.HandlerFunc{
				"/user/orgs":  paged([]any{map[string]any{"login": "Acme"}}, http.Header{"X-Oauth-Scopes": {"user:email"}}, &orgHits),
				"/user/teams": paged(teams, granted, &teamHits),
			}
		}, http.StatusBadGateway, nil, "without read:org"},
		{"teams listing fails though the organisation admits", Rule{Orgs: []string{"acme"}}, nil, func(f *fakeAPI) {
			normal(f)
			f.routes["/user/teams"] = func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(http.StatusInternalServerError)
				fmt.Fprint(w, `{"message":"Server Error"}`)
			}
		}, http.StatusBadGateway, nil, "reading the groups"},
		{"teams listing refused (403)", Rule{Teams: []string{"acme/backup-ops"}}, nil, func(f *fakeAPI) {
			normal(f)
			f.routes["/user/teams"] = func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(http.StatusForbidden)
				fmt.Fprint(w, `{"message":"Resource not accessible by integration","documentation_url":"https://docs.github.com/rest/teams/teams#list-teams-for-the-authenticated-user"}`)
			}
		}, http.StatusBadGateway, nil, "403 Forbidden"},
		{"next page at another host", Rule{Orgs: []string{"acme"}}, nil, func(f *fakeAPI) {
			normal(f)
			f.routes["/user/orgs"] = func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Link", `<http://127.0.0.2:9/user/orgs?page=2>; rel="next"`)
				fmt.Fprint(w, `[{"login":"org-a"}]`)
			}
		}, http.StatusBadGateway, nil, "not at the API's address"},
		{"endless listing", Rule{Orgs: []string{"acme"}}, nil, func(f *fakeAPI) {
			normal(f)
			f.routes["/user/orgs"] = func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Link", `</user/orgs?per_page=100&page=2>; rel="next"`)
				fmt.Fprint(w, `[]`)
			}
		}, http.StatusBadGateway, nil, "more than 20 pages"},
		{"garbage listing", Rule{Orgs: []string{"acme"}}, nil, func(f *fakeAPI) {
			normal(f)
			f.routes["/user/orgs"] = func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, `{"login":"acme"}`) }
		}, http.StatusBadGateway, nil, "malformed JSON"},
		{"no group key: groups not read", Rule{Domains: []string{"example.com"}}, nil, normal, http.StatusOK, nil, ""},
		{"read:org in scopes: groups read for access rules", Rule{Domains: []string{"example.com"}}, []string{"user:email", "read:org"}, normal, http.StatusOK, []string{"acme/backup-ops"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			orgHits.Store(0)
			teamHits.Store(0)
			f.set(func(f *fakeAPI) {
				f.tokenAnswer, f.emailsCode = nil, 0
				f.user, f.emails = githubUser, githubEmails(ghEmail("octo@example.com", true, true))
				tt.setup(f)
			})
			cfg := githubConfig(f, tt.rule)
			cfg.Scopes = tt.scopes
			s.logs = &logtest.Buffer{}
			s.use(cfg, auth.Deps{})
			c := browser(t)
			resp, body := get(t, c, s.URL+LoginPath+"?next=/api/backups")
			if resp.StatusCode != tt.want {
				t.Fatalf("got %d at %s, want %d; %.300s\nlog:\n%s", resp.StatusCode, resp.Request.URL, tt.want, body, s.logs.String())
			}
			authQ, _ := f.recorded()
			wantScope := "user:email read:org"
			if tt.rule.ByGroup() == false && tt.scopes == nil {
				wantScope = "user:email"
			}
			if authQ.Get("scope") != wantScope {
				t.Errorf("scope %q, want %q", authQ.Get("scope"), wantScope)
			}
			u, ok := s.signedInUser(t, c)
			switch tt.want {
			case http.StatusOK:
				if !ok {
					t.Fatal("not signed in")
				}
				for _, g := range tt.groups {
					if !slices.Contains(u.Groups, g) {
						t.Errorf("groups %v lack %q", u.Groups, g)
					}
				}
				if !slices.IsSorted(u.Groups) || len(slices.Compact(slices.Clone(u.Groups))) != len(u.Groups) {
					t.Errorf("groups not sorted and unique: %v", u.Groups)
				}
				if tt.groups == nil && (u.Groups != nil || orgHits.Load()+teamHits.Load() != 0) {
					t.Errorf("groups read (%d requests) without a reason: %v", orgHits.Load()+teamHits.Load(), u.Groups)
				}
				if tt.groups != nil && orgHits.Load() < 2 {
					t.Errorf("the second page of organisations was not read (%d requests)", orgHits.Load())
				}
				if _, has := u.Attrs.Lookup(groupsAttr); has {
					t.Errorf("groups left in the attributes: %v", u.Attrs)
				}
			case http.StatusForbidden:
				if ok {
					t.Error("signed in")
				}
				if !strings.Contains(body, "Access denied") {
					t.Errorf("page: %.300s", body)
				}
				s.assertLogged(t, "e-mail not admitted", tt.logged)
			default:
				if ok {
					t.Error("signed in")
				}
				s.assertOutage(t, "reading the groups", tt.logged)
			}
			s.assertNoSecrets(t, "gh-secret", fakeCode, fakeAccessToken)
		})
	}
}

// gitlabUserinfo answers GitLab's /oauth/userinfo: the OpenID Connect
// claims of the token's account, groups as full paths, and 403
// insufficient_scope when the token was not granted openid.
func gitlabUserinfo(f *fakeAPI, sub string, groups any) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		authQ, _ := f.recorded()
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		if !slices.Contains(strings.Fields(authQ.Get("scope")), "openid") {
			w.WriteHeader(http.StatusForbidden)
			fmt.Fprint(w, `{"error":"insufficient_scope","error_description":"The request requires higher privileges than provided by the access token.","scope":"openid"}`)
			return
		}
		json.NewEncoder(w).Encode(map[string]any{"sub": sub, "sub_legacy": "9f2c", "name": "Tanuki", "nickname": "tanuki",
			"preferred_username": "tanuki", "email": "tanuki@example.com", "email_verified": true, "groups": groups})
	}
}

// gitlabGroupsAPI answers GitLab's /api/v4/groups: with min_access_level,
// the groups the account is a member of (many, acme/infra on the second
// page of 100); without it, every group the account can see, which holds
// acme/secret-ops too. Without the scope read_api or api: 403.
func gitlabGroupsAPI(f *fakeAPI, hits *atomic.Int32) http.HandlerFunc {
	var member, visible []any
	for i := range 130 {
		path := fmt.Sprintf("team-%03d", i)
		if i == 110 {
			path = "acme/infra"
		}
		g := map[string]any{"id": i + 1, "name": path, "path": path, "full_path": path, "visibility": "private"}
		member = append(member, g)
		visible = append(visible, g)
	}
	visible = append(visible, map[string]any{"id": 999, "name": "secret-ops", "path": "secret-ops", "full_path": "acme/secret-ops", "visibility": "internal"})
	members, all := paged(member, nil, hits), paged(visible, nil, hits)
	return func(w http.ResponseWriter, r *http.Request) {
		authQ, _ := f.recorded()
		scopes := strings.Fields(authQ.Get("scope"))
		if !slices.Contains(scopes, "read_api") && !slices.Contains(scopes, "api") {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusForbidden)
			fmt.Fprint(w, `{"error":"insufficient_scope","error_description":"The request requires higher privileges than provided by the access token.","scope":"api read_api"}`)
			return
		}
		if r.URL.Query().Get("min_access_level") != "" {
			members(w, r)
			return
		}
		all(w, r)
	}
}

func TestGitLabGroups(t *testing.T) {
	f := newFakeAPI(t, "gl-secret")
	s := newService(t)
	gitlabUser := `{"id":42,"username":"tanuki","name":"Tanuki","state":"active","email":"tanuki@example.com","confirmed_at":"2024-01-02T03:04:05Z"}`
	var apiHits atomic.Int32
	claim := func(sub string, groups any) func(f *fakeAPI) {
		return func(f *fakeAPI) {
			f.routes = map[string]http.HandlerFunc{"/gitlab/oauth/userinfo": gitlabUserinfo(f, sub, groups), "/gitlab/api/v4/groups": gitlabGroupsAPI(f, &apiHits)}
		}
	}
	tests := []struct {
		name      string
		groups    []string
		scopes    []string
		setup     func(f *fakeAPI)
		want      int
		wantScope string
		has       []string
		logged    string
	}{
		{"groups claim", []string{"acme/infra"}, nil, claim("42", []string{"acme", "acme/infra", "Acme-Labs"}), http.StatusOK,
			"read_user email openid", []string{"Acme-Labs", "acme", "acme/infra"}, ""},
		{"paths compared exactly", []string{"Acme/Infra"}, nil, claim("42", []string{"acme", "acme/infra"}), http.StatusForbidden,
			"read_user email openid", nil, "none listed"},
		{"a parent group is not its subgroup", []string{"acme/infra/backups"}, nil, claim("42", []string{"acme", "acme/infra"}), http.StatusForbidden,
			"read_user email openid", nil, "none listed"},
		{"user information about another account", []string{"acme/infra"}, nil, claim("43", []string{"acme/infra"}), http.StatusBadGateway,
			"read_user email openid", nil, "another account"},
		{"groups claim of the wrong shape", []string{"acme/infra"}, nil, claim("42", map[string]any{"acme/infra": true}), http.StatusBadGateway,
			"read_user email openid", nil, "neither a string nor an array"},
		{"user information fails", []string{"acme/infra"}, nil, func(f *fakeAPI) {
			f.routes = map[string]http.HandlerFunc{"/gitlab/oauth/userinfo": func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(http.StatusServiceUnavailable)
			}}
		}, http.StatusBadGateway, "read_user email openid", nil, "503"},
		{"API, second page", []string{"acme/infra"}, []string{"read_user", "email", "read_api"}, claim("42", nil), http.StatusOK,
			"read_user email read_api", []string{"acme/infra", "team-000", "team-129"}, ""},
		{"API lists only memberships", []string{"acme/secret-ops"}, []string{"read_user", "email", "read_api"}, claim("42", nil), http.StatusForbidden,
			"read_user email read_api", nil, "130 groups from the provider, none listed"},
		{"API fails", []string{"acme/infra"}, []string{"read_user", "email", "api"}, func(f *fakeAPI) {
			f.routes = map[string]http.HandlerFunc{"/gitlab/api/v4/groups": func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(http.StatusInternalServerError)
				fmt.Fprint(w, `{"message":"500 Internal Server Error"}`)
			}}
		}, http.StatusBadGateway, "read_user email api", nil, "500"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			apiHits.Store(0)
			f.set(func(f *fakeAPI) { f.user, f.tokenAnswer = gitlabUser, nil; tt.setup(f) })
			s.logs = &logtest.Buffer{}
			s.use(Config{Provider: "gitlab", ClientID: "gl-client", ClientSecret: "gl-secret", Scopes: tt.scopes,
				BaseURL: f.URL + "/gitlab", Rule: Rule{Groups: tt.groups}}, auth.Deps{})
			c := browser(t)
			resp, body := get(t, c, s.URL+LoginPath)
			if resp.StatusCode != tt.want {
				t.Fatalf("got %d at %s, want %d; %.300s\nlog:\n%s", resp.StatusCode, resp.Request.URL, tt.want, body, s.logs.String())
			}
			if authQ, _ := f.recorded(); authQ.Get("scope") != tt.wantScope {
				t.Errorf("scope %q, want %q", authQ.Get("scope"), tt.wantScope)
			}
			u, ok := s.signedInUser(t, c)
			switch tt.want {
			case http.StatusOK:
				if !ok {
					t.Fatal("not signed in")
				}
				for _, g := range tt.has {
					if !slices.Contains(u.Groups, g) {
						t.Errorf("groups %v lack %q", u.Groups, g)
					}
				}
				if slices.Contains(u.Groups, "acme/secret-ops") {
					t.Errorf("a group the account only sees was taken for a membership: %v", u.Groups)
				}
				if slices.Contains(tt.scopes, "read_api") && apiHits.Load() != 2 {
					t.Errorf("%d requests to the groups API, want 2 pages", apiHits.Load())
				}
			case http.StatusForbidden:
				if ok {
					t.Error("signed in")
				}
				s.assertLogged(t, "e-mail not admitted", tt.logged)
			default:
				if ok {
					t.Error("signed in")
				}
				s.assertOutage(t, "reading the groups", tt.logged)
			}
			s.assertNoSecrets(t, "gl-secret", fakeCode, fakeAccessToken)
		})
	}
}

// TestGroupsInSession: the groups read at sign-in are the session's on
// every later request and after a restart, with the file store and with
// Redis, without asking the identity provider again; a restart with a rule
// that no longer admits them ends the session.
func TestGroupsInSession(t *testing.T) {
	for _, store := range []string{"file", "redis"} {
		t.Run(store, func(t *testing.T) {
			f := newFakeAPI(t, "gh-secret")
			s := newService(t)
			var hits atomic.Int32
			f.set(func(f *fakeAPI) {
				f.user, f.emails = githubUser, githubEmails(ghEmail("octo@example.com", true, true))
				granted := http.Header{"X-Oauth-Scopes": {"read:org"}}
				f.routes = map[string]http.HandlerFunc{
					"/user/orgs":  paged([]any{map[string]any{"login": "Acme"}, map[string]any{"login": "Umbrella"}}, granted, &hits),
					"/user/teams": paged([]any{ghTeam("Acme", "backup-ops")}, granted, &hits),
				}
			})
			env := auth.Deps{StateDir: t.TempDir()}
			var rd rueidis.Client
			if store == "redis" {
				srv := redistest.Start(t, redistest.Options{})
				c, err := redisstore.Open(redisstore.Options(srv.Config()), slog.New(slog.DiscardHandler))
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { c.Close() })
				env.Shared = c
				opt, err := rueidis.ParseURL(srv.URL())
				if err != nil {
					t.Fatal(err)
				}
				opt.DisableCache = true
				if rd, err = rueidis.NewClient(opt); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(rd.Close)
			}
			cfg := githubConfig(f, Rule{Teams: []string{"acme/backup-ops"}})
			p := s.use(cfg, env)
			c := browser(t)
			if resp, body := get(t, c, s.URL+LoginPath+"?next=/api/backups"); resp.StatusCode != http.StatusOK {
				t.Fatalf("sign-in: %d %.300s", resp.StatusCode, body)
			}
			want := []string{"acme", "acme/backup-ops", "umbrella"}
			read := hits.Load()
			for i := range 3 {
				if resp, _ := get(t, c, s.URL+"/api/backups"); resp.StatusCode != http.StatusOK {
					t.Fatalf("request %d: %d", i, resp.StatusCode)
				}
				if u, ok := s.signedInUser(t, c); !ok || !slices.Equal(u.Groups, want) {
					t.Fatalf("request %d: signed in %v, groups %q, want %q", i, ok, u.Groups, want)
				}
			}
			if hits.Load() != read {
				t.Errorf("requests asked the provider for groups (%d requests, %d at sign-in)", hits.Load(), read)
			}
			if rec, _ := s.me(t, c); rec["groups"] != "" {
				t.Errorf("/api/me shows the groups' encoding: %q", rec["groups"])
			}
			if store == "redis" {
				// A writer of the store who adds a group to a session's
				// record ends that session; it never gains the group.
				before := sessionKeys(t, rd)
				other := browser(t)
				if resp, _ := get(t, other, s.URL+LoginPath); resp.StatusCode != http.StatusOK {
					t.Fatalf("second sign-in: %d", resp.StatusCode)
				}
				addGroup(t, rd, before, "initech")
				// Until Redis's invalidation reaches this client's cache,
				// the unedited record may still be read; the edited one
				// is never taken.
				testkit.WaitUntil(t, 5*time.Second, func() bool {
					u, ok := s.signedInUser(t, other)
					if slices.Contains(u.Groups, "initech") {
						t.Fatalf("a record edited in Redis gave its group: %q", u.Groups)
					}
					return !ok
				}, func() string { return "a record edited in Redis still admits" })
				if !strings.Contains(s.logs.String(), "fails its check") {
					t.Errorf("the edited record was not refused for its MAC:\n%s", s.logs.String())
				}
			}

			// A restart: a new provider over the same store.
			read = hits.Load()
			p.Close()
			s.use(cfg, env)
			if u, ok := s.signedInUser(t, c); !ok || !slices.Equal(u.Groups, want) {
				t.Fatalf("after a restart: signed in %v, groups %q, want %q", ok, u.Groups, want)
			}
			if hits.Load() != read {
				t.Errorf("the provider was asked for groups again (%d requests, %d at sign-in)", hits.Load(), read)
			}

			// A restart with a rule the recorded groups do not satisfy.
			s.logs = &logtest.Buffer{}
			s.p.Close()
			s.use(githubConfig(f, Rule{Orgs: []string{"initech"}}), env)
			if _, ok := s.signedInUser(t, c); ok {
				t.Fatal("a session whose groups the new rule does not admit is still good")
			}
			s.assertLogged(t, "no longer admitted", "octo@example.com")
			if resp, _ := get(t, c, s.URL+"/api/backups"); resp.StatusCode == http.StatusOK {
				t.Error("the ended session still serves")
			}
		})
	}
}

// sessionKeys returns the session keys under the tests' prefix.
func sessionKeys(t *testing.T, rd rueidis.Client) []string {
	t.Helper()
	keys, err := rd.Do(context.Background(), rd.B().Keys().Pattern("test:s:*").Build()).AsStrSlice()
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

// addGroup plays a writer of the Redis store: it adds group to the groups
// of every session record made since the keys before.
func addGroup(t *testing.T, rd rueidis.Client, before []string, group string) {
	t.Helper()
	ctx := context.Background()
	edited := 0
	for _, k := range sessionKeys(t, rd) {
		if slices.Contains(before, k) {
			continue
		}
		r, err := rd.Do(ctx, rd.B().Hget().Key(k).Field("r").Build()).ToString()
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(r, `"groups":"`) {
			t.Fatalf("record without groups: %s", r)
		}
		r = strings.Replace(r, `"groups":"`, `"groups":"`+group+`\n`, 1)
		if err := rd.Do(ctx, rd.B().Hset().Key(k).FieldValue().FieldValue("r", r).Build()).Error(); err != nil {
			t.Fatal(err)
		}
		edited++
	}
	if edited != 1 {
		t.Fatalf("%d records edited, want 1", edited)
	}
}
