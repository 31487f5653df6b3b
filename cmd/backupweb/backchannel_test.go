package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/testkit/oidctest"
	"github.com/backupweb/backupweb/internal/testkit/redistest"
	"github.com/backupweb/backupweb/internal/testkit/wstest"
)

// pickHeader names the instance the front sends a request to ("a", "b").
const pickHeader = "X-Test-Instance"

// picker is a client transport that sends pickHeader on every request
// to the front.
type picker struct {
	front, to string
}

func (p picker) RoundTrip(r *http.Request) (*http.Response, error) {
	if "http://"+r.URL.Host == p.front {
		r = r.Clone(r.Context())
		r.Header.Set(pickHeader, p.to)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// TestTwoInstancesBackchannelLogout: two instances of oauth in proxy mode
// share one Redis; alice signs in twice, once through each instance,
// and holds a WebSocket to the application through instance B. The
// identity provider's logout token for her account, posted to instance
// A, ends both her sessions on both instances and closes her WebSocket on
// B, while bob's session and WebSocket go on; the same token replayed to
// B is refused (its jti is spent in Redis).
func TestTwoInstancesBackchannelLogout(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{Password: redisPassword})
	ws := wstest.StartEcho(t)
	var targets [2]atomic.Pointer[url.URL]
	front := httptest.NewServer(&httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		i := 0
		if r.In.Header.Get(pickHeader) == "b" {
			i = 1
		}
		r.SetURL(targets[i].Load())
		r.Out.Host = r.In.Host
	}})
	t.Cleanup(front.Close)
	users := []oidctest.User{
		{Username: "alice", Password: "pw", Email: "alice@example.com", EmailVerified: true},
		{Username: "bob", Password: "pw", Email: "bob@example.com", EmailVerified: true},
	}
	op := oidctest.Start(t, oidctest.Options{Users: users,
		Clients: []oidctest.Client{{ID: "pair", Secret: "s", RedirectURIs: []string{front.URL + "/oauth/callback"}}}})
	dir := t.TempDir()
	conf := fmt.Sprintf(`[server]
listen = 127.0.0.1:0
store = redis
state_dir = %s
[redis]
url = %s
password = ${REDIS_PASSWORD}
[proxy]
upstream = %s
[authentication]
type = oauth
provider = generic
issuer = %s
client_id = pair
client_secret = s
redirect_uri = %s/oauth/callback
authorized_domains = example.com
`, filepath.Join(dir, "state"), srv.URL(), ws.URL, op.Issuer, front.URL)
	a, b := startInstance(t, conf), startInstance(t, conf)
	for i, in := range []*instance{a, b} {
		u, _ := url.Parse(in.url)
		targets[i].Store(u)
	}

	// signIn signs user in with every request to the front going to
	// instance to, and returns the browser and the provider's session.
	signIn := func(user, to string) (*http.Client, oidctest.Session) {
		t.Helper()
		jar, _ := cookiejar.New(nil)
		c := &http.Client{Jar: jar, Timeout: 10 * time.Second, Transport: picker{front.URL, to}}
		page, err := c.Get(front.URL + "/oauth/login?next=/_backupweb/userinfo")
		if err != nil {
			t.Fatal(err)
		}
		resp, err := op.SubmitLogin(c, page, user, "pw")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), user+"@example.com") {
			t.Fatalf("sign-in of %s through %s: %d %s", user, to, resp.StatusCode, body)
		}
		return c, op.LastSession()
	}
	// signedIn reports whether c's session is good on instance base.
	cookies := func(c *http.Client) []*http.Cookie { u, _ := url.Parse(front.URL); return c.Jar.Cookies(u) }
	signedIn := func(c *http.Client, base string) bool {
		t.Helper()
		req, _ := http.NewRequest("GET", base+"/_backupweb/userinfo", nil)
		for _, k := range cookies(c) {
			req.AddCookie(k)
		}
		resp, err := noRedirect.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}
	dial := func(c *http.Client, base string) *wstest.Conn {
		t.Helper()
		conn := wstest.Dial(t, base, "/comms", func(req *http.Request) {
			for _, k := range cookies(c) {
				req.AddCookie(k)
			}
		})
		ws.Wait(t, "open", 5*time.Second)
		return conn
	}

	alice1, s1 := signIn("alice", "a")
	alice2, s2 := signIn("alice", "b")
	bob, _ := signIn("bob", "b")
	if s1.SID == s2.SID || s1.Subject != s2.Subject {
		t.Fatalf("alice's two sign-ins: %+v %+v, want one subject, two provider sessions", s1, s2)
	}
	for _, c := range []*http.Client{alice1, alice2, bob} {
		for _, in := range []*instance{a, b} {
			if !signedIn(c, in.url) {
				t.Fatalf("a session is not good on %s before the logout", in.url)
			}
		}
	}
	aliceWS, bobWS := dial(alice1, b.url), dial(bob, b.url)
	for _, c := range []*wstest.Conn{aliceWS, bobWS} {
		if err := c.Echo("before"); err != nil {
			t.Fatalf("before the logout: %v", err)
		}
	}

	claims := op.LogoutClaims("pair", s1, time.Now())
	delete(claims, "sid") // the account: every session of alice's
	tok, err := op.SignLogoutToken(claims)
	if err != nil {
		t.Fatal(err)
	}
	post := func(base string) (int, string) {
		t.Helper()
		resp, err := http.PostForm(base+"/oauth/backchannel-logout", url.Values{"logout_token": {tok}})
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode, string(body)
	}
	if code, body := post(a.url); code != http.StatusOK {
		t.Fatalf("back-channel logout on A: %d %s\n%s", code, body, a.stderr.String())
	}
	closed := aliceWS.ClosedWithin(t, 5*time.Second)
	t.Logf("alice's WebSocket on B closed %s after the logout token reached A", closed)
	ws.Wait(t, "closed", 5*time.Second)
	for _, c := range []*http.Client{alice1, alice2} {
		for _, in := range []*instance{a, b} {
			if signedIn(c, in.url) {
				t.Errorf("an alice session is still good on %s after the provider's logout", in.url)
			}
		}
	}
	if !signedIn(bob, a.url) || !signedIn(bob, b.url) {
		t.Error("bob's session ended with alice's")
	}
	if err := bobWS.Echo("bob goes on"); err != nil {
		t.Errorf("bob's WebSocket ended with alice's: %v", err)
	}
	if code, body := post(b.url); code != http.StatusBadRequest || !strings.Contains(body, "used already") {
		t.Errorf("the token replayed to B: %d %s, want 400", code, body)
	}
	if !strings.Contains(b.stderr.String(), "logout token rejected") {
		t.Errorf("B logged no refusal of the replay:\n%s", b.stderr.String())
	}
}
