package main

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/testkit"
)

// forgedRequest are the headers a hostile client adds to every request it
// sends through a documented proxy: another request's method, path and
// host in both rows of forward authentication, identity and groups
// headers in the spellings an application may read.
var forgedRequest = map[string]string{
	"X-Forwarded-Uri":                   "/status",
	"X-Forwarded-Method":                "GET",
	"X-Forwarded-Host":                  "status.example.com",
	"X-Original-URI":                    "/status",
	"X-Original-Method":                 "GET",
	"X-Original-Host":                   "status.example.com",
	"X-Forwarded-User":                  "mallory",
	"X_Forwarded_User":                  "mallory",
	"x_forwarded_user":                  "mallory",
	"X-Forwarded-Email":                 "mallory@evil.example",
	"X_Forwarded_Email":                 "mallory@evil.example",
	"X-Forwarded-Groups":                "admins",
	"X_Forwarded_Groups":                "admins",
	"X-Auth-Request-User":               "mallory",
	"X-Auth-Request-Email":              "mallory@evil.example",
	"X-Auth-Request-Groups":             "admins",
	"X-Auth-Request-Preferred-Username": "mallory",
	"X-Auth-Request-Access-Token":       "forged",
	"X_Auth_Request_User":               "mallory",
	"Remote-User":                       "mallory",
	"Remote-Groups":                     "admins",
	"Remote-Email":                      "mallory@evil.example",
	"Remote-Name":                       "Mallory",
	"Remote_User":                       "mallory",
	"X-Remote-User":                     "mallory",
}

// forgedCookies are backupweb's cookie names, in every prefix, that a
// client adds beside an application cookie of its own (theme): a forged
// session for a client without one, and for a signed-in browser, which
// adds its three real cookies after them, as many more as the nginx
// snippet's maps remove (signedInCookies) or more (tooManyCookies).
const (
	anonymousCookies = "theme=dark; backupweb_session=forged; __Host-backupweb_csrf=x; __Secure-backupweb_device=x; backupweb_oauth_abc=flow"
	signedInCookies  = "theme=dark; __Host-backupweb_csrf=x; __Secure-backupweb_device=x; backupweb_oauth_abc=flow"
	tooManyCookies   = signedInCookies + "; backupweb_a=1; backupweb_b=2; __Secure-backupweb_c=3"
)

// identityHeader reports whether name (any spelling) is one of the
// identity or groups headers that only backupweb's answer may fill.
func identityHeader(name string) bool {
	n := strings.ReplaceAll(strings.ToLower(name), "_", "-")
	switch n {
	case "x-forwarded-user", "x-forwarded-email", "x-forwarded-groups", "remote-user", "remote-groups", "remote-email", "remote-name", "x-remote-user":
		return true
	}
	return strings.HasPrefix(n, "x-auth-request-")
}

// recordingApp is the guarded application: it records, per path, what each
// request brought it.
type recordingApp struct {
	mu   sync.Mutex
	seen map[string][]http.Header // by path
}

func (a *recordingApp) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	a.seen[r.URL.Path] = append(a.seen[r.URL.Path], r.Header.Clone())
	a.mu.Unlock()
	json.NewEncoder(w).Encode(map[string]string{"path": r.URL.Path})
}

// last returns what the latest request for path brought, and how many came.
func (a *recordingApp) last(path string) (http.Header, int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	s := a.seen[path]
	if len(s) == 0 {
		return nil, 0
	}
	return s[len(s)-1], len(s)
}

// forgeCase is one request of a forging client through a documented proxy.
type forgeCase struct {
	who          string // "anonymous", or "alice" (signed in, group admins)
	method, path string
	status       int
	user, groups string // what the application must be told; "" for nothing
	cookies      string // the client's Cookie header, before its real ones
}

// forgeCases: the anonymous rule of /status lends itself to no other
// request, the deny rules of /admin/ and of DELETE under /api/ hold for a
// signed-in user, and what passes brings backupweb's answer alone.
var forgeCases = []forgeCase{
	{"anonymous", "GET", "/admin/secret", 401, "", "", anonymousCookies},
	{"anonymous", "DELETE", "/api/backups/x", 401, "", "", anonymousCookies},
	{"anonymous", "GET", "/app/page", 401, "", "", anonymousCookies},
	{"anonymous", "GET", "/status", 200, "", "", anonymousCookies},
	{"alice", "GET", "/admin/secret", 403, "", "", signedInCookies},
	{"alice", "DELETE", "/api/backups/x", 403, "", "", signedInCookies},
	{"alice", "GET", "/status", 200, "", "", signedInCookies},
	{"alice", "GET", "/app/page", 200, "alice", "admins", signedInCookies},
	{"alice", "GET", "/app/other", 200, "alice", "admins", tooManyCookies},
}

// forgeBackupweb serves the forward-auth configuration of docs/guarding.md
// with alice in group admins and the rules the forge cases test.
func forgeBackupweb(t *testing.T) string {
	t.Helper()
	addr, _ := serveGuardingDoc(t, "backupweb's configuration for all three", func(ini, dir string) string {
		groups := filepath.Join(dir, "groups")
		os.WriteFile(groups, []byte("admins: alice\n"), 0o600)
		return ini + "groups_file = " + groups + "\n\n[access]\nrule1 = GET ^/status$ anonymous\nrule2 = * ^/admin/ deny\nrule3 = DELETE ^/api/ deny\n"
	})
	return addr
}

// forgedReq is c's request to front, with every forged header and c's
// cookies.
func forgedReq(front string, c forgeCase) *http.Request {
	req, _ := http.NewRequest(c.method, front+c.path, nil)
	for k, v := range forgedRequest {
		req.Header[k] = []string{v}
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Cookie", c.cookies)
	return req
}

// TestSnippetsHoldAgainstForgery runs the nginx and Caddy configurations of
// docs/guarding.md as written (addresses aside) in front of backupweb
// (its forward-auth configuration of the same page, with an anonymous
// rule, two deny rules and a groups file) and a recording application. A
// client forges every header the proxy might pass on: another request's
// target in X-Forwarded-* and X-Original-*, identity and groups headers in
// every spelling, backupweb's cookies (forgeCases). Checked: the anonymous
// rule of /status lends itself to no other request, the deny rules hold
// for a signed-in user, and the application receives backupweb's answer
// alone: no forged identity or groups header, no placeholder text, no
// backupweb cookie, and the client's own cookie intact.
func TestSnippetsHoldAgainstForgery(t *testing.T) {
	for name, start := range map[string]func(t *testing.T, listen, backupweb, upstream string) string{"nginx": startNginx, "caddy": startCaddy} {
		t.Run(name, func(t *testing.T) {
			app := &recordingApp{seen: map[string][]http.Header{}}
			up := &http.Server{Handler: app}
			uln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			go up.Serve(uln)
			t.Cleanup(func() { up.Close() })
			front := start(t, testkit.FreeAddr(t), forgeBackupweb(t), uln.Addr().String())

			anon := &http.Client{Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
			alice := testkit.Client()
			alice.Timeout = 10 * time.Second
			testkit.SignIn(t, alice, testkit.Login{Page: front + "/login", User: "alice", Password: "alice-pw"})
			for _, c := range forgeCases {
				client := anon
				if c.who == "alice" {
					client = alice
				}
				_, before := app.last(c.path)
				resp, err := client.Do(forgedReq(front, c))
				if err != nil {
					t.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				h, after := app.last(c.path)
				if resp.StatusCode != c.status {
					t.Errorf("%s %s %s: %d, want %d", c.who, c.method, c.path, resp.StatusCode, c.status)
				}
				if c.status != 200 {
					if after != before {
						t.Errorf("%s %s %s reached the application", c.who, c.method, c.path)
					}
					continue
				}
				if after != before+1 {
					t.Fatalf("%s %s %s: the application was asked %d times, want once", c.who, c.method, c.path, after-before)
				}
				// With more of backupweb's cookies than its maps remove, nginx
				// sends none: the client's own may then be lost too.
				keepsOwn := c.cookies != tooManyCookies || name == "caddy"
				checkAppHeaders(t, c.who+" "+c.method+" "+c.path, h, "X-Forwarded-User", c.user, c.groups, keepsOwn)
			}
			// A person the rules refuse reads backupweb's styled page, through
			// nginx's error_page as from Caddy's forward_auth.
			page := forgedReq(front, forgeCase{method: "GET", path: "/admin/secret", cookies: signedInCookies})
			page.Header.Set("Accept", "text/html")
			resp, err := alice.Do(page)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(body), "may not use this page") {
				t.Errorf("a refused person through %s: %d %.300q, want 403 saying why", name, resp.StatusCode, body)
			}
			if name == "nginx" && !strings.Contains(string(body), `rel="stylesheet"`) {
				t.Errorf("a refused person through nginx: not backupweb's styled page: %.300q", body)
			}
		})
	}
}

// TestTraefikSnippetHoldsAgainstForgery is TestSnippetsHoldAgainstForgery
// for the Traefik configuration of docs/guarding.md, at the header level
// (traefikForwardAuth; no Traefik runs here): the same forged requests,
// the same checks of what the application would get, which under Traefik
// reads the user in X-Auth-Request-User and gets no Cookie at all.
func TestTraefikSnippetHoldsAgainstForgery(t *testing.T) {
	backupweb := forgeBackupweb(t)
	tc := readTraefikConf(t, backupweb)
	jar := testkit.Client()
	testkit.SignIn(t, jar, testkit.Login{Page: "http://" + backupweb + "/login", User: "alice", Password: "alice-pw"})
	u, _ := url.Parse("http://" + backupweb + "/")
	for _, c := range forgeCases {
		req := forgedReq("http://backups.example.com", c)
		if c.who == "alice" {
			for _, ck := range jar.Jar.Cookies(u) {
				req.AddCookie(ck)
			}
		}
		h, stopped := traefikForwardAuth(t, tc, req)
		what := c.who + " " + c.method + " " + c.path
		switch {
		case stopped != nil && stopped.StatusCode != c.status:
			t.Errorf("%s: stopped with %d, want %d", what, stopped.StatusCode, c.status)
		case stopped == nil && c.status != 200:
			t.Errorf("%s: passed to the application, want %d", what, c.status)
		case stopped == nil:
			checkAppHeaders(t, what, h, "X-Auth-Request-User", c.user, c.groups, false)
			if v := h.Values("Cookie"); len(v) > 0 {
				t.Errorf("%s: the application would get Cookie %q", what, v)
			}
		}
	}
}

// checkAppHeaders checks what one request brought the application: the
// identity headers hold backupweb's answer (user, read in userHeader as a
// WSGI application reads it, and groups; or nothing), never a forged
// value nor a placeholder, and Cookie only the client's own (all of them,
// when keepsOwn).
func checkAppHeaders(t *testing.T, what string, h http.Header, userHeader, user, groups string, keepsOwn bool) {
	t.Helper()
	want := map[string]string{"x-forwarded-user": user, "x-forwarded-groups": groups, "x-auth-request-user": user, "x-auth-request-groups": groups}
	for name, vals := range h {
		if !identityHeader(name) {
			continue
		}
		n := strings.ReplaceAll(strings.ToLower(name), "_", "-")
		if w := want[n]; len(vals) != 1 || vals[0] != w || w == "" || strings.ContainsAny(vals[0], "{}") {
			t.Errorf("%s: the application got %s: %q", what, name, vals)
		}
	}
	if got := asWSGIReads(h, userHeader); got != user {
		t.Errorf("%s: the application read %s %q, want %q", what, userHeader, got, user)
	}
	if got := asWSGIReads(h, "X-Forwarded-Groups"); got != groups {
		t.Errorf("%s: the application read X-Forwarded-Groups %q, want %q", what, got, groups)
	}
	cookies := strings.Join(h.Values("Cookie"), "; ")
	for _, c := range strings.Split(cookies, ";") {
		name, _, _ := strings.Cut(strings.TrimSpace(c), "=")
		if strings.Contains(name, "backupweb_") {
			t.Errorf("%s: the application got backupweb's cookie %s (Cookie %q)", what, name, cookies)
		}
	}
	if keepsOwn && !strings.Contains(cookies, "theme=dark") {
		t.Errorf("%s: the client's own cookie was lost: %q", what, cookies)
	}
}
