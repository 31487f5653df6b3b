package oauth

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/backupweb/backupweb/auth"
	"github.com/backupweb/backupweb/internal/logtest"
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
				if _, has := u.Attrs[groupsAttr]; has {
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
