package main

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/testkit"
	"github.com/backupweb/backupweb/internal/testkit/oidctest"
)

// traefikConf is what the documentation's Traefik configuration tells its
// guarded router to do: the forwardAuth middleware's address and the
// headers it copies (authResponseHeaders, authResponseHeadersRegex), then
// the request headers a headers middleware removes (customRequestHeaders
// set to "").
type traefikConf struct {
	address string
	copy    []string
	regex   *regexp.Regexp
	remove  []string
}

// readTraefikConf reads the documentation's Traefik configuration, with
// backupweb's address in place of the documented one.
func readTraefikConf(t *testing.T, backupweb string) traefikConf {
	t.Helper()
	conf := docSnippet(t, guardingDoc, "**Traefik**", "yaml")
	m := regexp.MustCompile(`address: "([^"]+)"`).FindStringSubmatch(conf)
	if m == nil {
		t.Fatalf("the documentation's Traefik configuration has no forwardAuth address:\n%s", conf)
	}
	tc := traefikConf{address: strings.Replace(m[1], "127.0.0.1:8080", backupweb, 1)}
	if h := regexp.MustCompile(`authResponseHeaders: \[([^\]]*)\]`).FindStringSubmatch(conf); h != nil {
		for _, name := range strings.Split(h[1], ",") {
			tc.copy = append(tc.copy, strings.Trim(strings.TrimSpace(name), `"`))
		}
	}
	if h := regexp.MustCompile(`authResponseHeadersRegex: "([^"]+)"`).FindStringSubmatch(conf); h != nil {
		tc.regex = regexp.MustCompile(h[1])
	}
	if tc.copy == nil && tc.regex == nil {
		t.Fatalf("the documentation's Traefik configuration copies no header:\n%s", conf)
	}
	if !regexp.MustCompile(`middlewares: \["backupweb"(, "[^"]+")*\]`).MatchString(conf) {
		t.Fatalf("the guarded router does not start with the backupweb middleware:\n%s", conf)
	}
	if h := regexp.MustCompile(`(?s)customRequestHeaders:\n((?:\s+[A-Za-z0-9_-]+: ""\n)+)`).FindStringSubmatch(conf); h != nil {
		for _, line := range strings.Split(strings.TrimSpace(h[1]), "\n") {
			tc.remove = append(tc.remove, strings.TrimSuffix(strings.TrimSpace(line), `: ""`))
		}
	}
	return tc
}

// traefikForwardAuth does what Traefik does with the documentation's
// settings (no Traefik is packaged for Debian, so none runs here): its
// forwardAuth asks the address with the client's headers (authRequestHeaders
// is not set, so all of them) and the X-Forwarded-* headers Traefik
// overwrites (trustForwardHeader is not set); a 2xx answer lets the request
// go on, first without every header the regex matches and then with the
// answer's headers it matches, then with each of copy deleted and set from
// the answer when the answer has it; the headers middleware then removes
// its headers. Any other answer goes back to the client. It returns the
// headers the guarded service would get, or the answer that stopped the
// request.
func traefikForwardAuth(t *testing.T, tc traefikConf, client *http.Request) (http.Header, *http.Response) {
	t.Helper()
	ask, _ := http.NewRequest(http.MethodGet, tc.address, nil)
	ask.Header = client.Header.Clone()
	ask.Header.Set("X-Forwarded-Method", client.Method)
	ask.Header.Set("X-Forwarded-Proto", "http")
	ask.Header.Set("X-Forwarded-Host", client.Host)
	ask.Header.Set("X-Forwarded-Uri", client.URL.RequestURI())
	ask.Header.Set("X-Forwarded-For", "127.0.0.1")
	c := &http.Client{Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(ask)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, resp
	}
	out := client.Header.Clone()
	if tc.regex != nil {
		for name := range out {
			if tc.regex.MatchString(name) {
				delete(out, name)
			}
		}
		for name, v := range resp.Header {
			if tc.regex.MatchString(name) {
				out[name] = append([]string(nil), v...)
			}
		}
	}
	for _, name := range tc.copy {
		out.Del(name)
		if v := resp.Header.Values(name); len(v) > 0 {
			out[http.CanonicalHeaderKey(name)] = append([]string(nil), v...)
		}
	}
	for _, name := range tc.remove {
		out.Del(name)
	}
	return out, nil
}

// TestReadmeTraefikForwardAuth reads the documentation's Traefik configuration
// and checks, against the real backupweb, the headers its forwardAuth
// copies to the guarded service: the signed-in user, no e-mail for a user
// without one (the client's X-Auth-Request-Email is not kept), and a
// browser without a session sent to the login page.
func TestReadmeTraefikForwardAuth(t *testing.T) {
	backupweb, _ := guardedSetup(t)
	tc := readTraefikConf(t, backupweb)

	// Without a session, a browser is sent to the login page. Traefik asks
	// with the address's own Host, so X-Forwarded-Host names another host
	// and next falls back to / (no redirect_hosts in this configuration).
	page, _ := http.NewRequest("GET", "http://backups.example.com/app/page?x=1", nil)
	page.Header.Set("Accept", "text/html")
	if _, resp := traefikForwardAuth(t, tc, page); resp == nil || resp.StatusCode != http.StatusFound ||
		resp.Header.Get("Location") != "/login?next=%2F" {
		t.Fatalf("a browser without a session: %v", resp)
	}

	// Sign in at backupweb (Traefik's backupweb-own router sends /login there).
	c := testkit.Client()
	c.Timeout = 10 * time.Second
	testkit.SignIn(t, c, testkit.Login{Page: "http://" + backupweb + "/login", User: "alice", Password: "alice-pw"})

	page.Header = http.Header{"Accept": {"text/html"}}
	for k, v := range forgedIdentity {
		page.Header[k] = []string{v}
	}
	u, _ := url.Parse("http://" + backupweb + "/")
	for _, ck := range c.Jar.Cookies(u) {
		page.AddCookie(ck)
	}
	got, stopped := traefikForwardAuth(t, tc, page)
	if stopped != nil {
		t.Fatalf("a signed-in request was stopped: %d", stopped.StatusCode)
	}
	if v := got.Values("X-Auth-Request-User"); len(v) != 1 || v[0] != "alice" {
		t.Errorf("the guarded service would get X-Auth-Request-User %q, want alice", v)
	}
	if v := got.Values("X-Auth-Request-Email"); len(v) != 0 {
		t.Errorf("the guarded service would get X-Auth-Request-Email %q for a user without an e-mail", v)
	}
}

// TestGuardWithEmail runs the documentation's nginx and Caddy configurations in
// front of backupweb with type oauth, whose users have an e-mail: after a
// sign-in through the proxy, the guarded interface reads the user and the
// e-mail backupweb vouches for, whatever the client adds.
func TestGuardWithEmail(t *testing.T) {
	for name, start := range map[string]func(t *testing.T, listen, backupweb, upstream string) string{"nginx": startNginx, "caddy": startCaddy} {
		t.Run(name, func(t *testing.T) {
			listen := testkit.FreeAddr(t)
			callback := "http://" + listen + "/oauth/callback"
			op := oidctest.Start(t, oidctest.Options{
				Users:   []oidctest.User{{Username: "carol", Password: "carol-pw", Email: "carol@example.com", EmailVerified: true}},
				Clients: []oidctest.Client{{ID: "guard", Secret: "guard-secret", RedirectURIs: []string{callback}}},
			})
			backupweb, upstream := guardedWith(t, "[authentication]\ntype = oauth\nprovider = generic\nissuer = "+op.Issuer+
				"\nclient_id = guard\nclient_secret = guard-secret\nredirect_uri = "+callback+"\nauthorized_domains = example.com\n")
			front := start(t, listen, backupweb, upstream)
			jar, _ := cookiejar.New(nil)
			c := &http.Client{Jar: jar, Timeout: 20 * time.Second}
			page, err := c.Get(front + "/oauth/login?next=/app/page")
			if err != nil {
				t.Fatal(err)
			}
			resp, err := op.SubmitLogin(c, page, "carol", "carol-pw")
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK || resp.Request.URL.Path != "/app/page" {
				t.Fatalf("sign-in through %s ended at %s with %d", name, resp.Request.URL, resp.StatusCode)
			}
			req, _ := http.NewRequest("GET", front+"/app/page", nil)
			for k, v := range forgedIdentity {
				req.Header[k] = []string{v}
			}
			resp, err = c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if !strings.Contains(string(body), "<p id=user>carol@example.com</p><p id=email>carol@example.com</p>") {
				t.Fatalf("the guarded interface read, through %s: %d\n%s", name, resp.StatusCode, body)
			}
		})
	}
}
