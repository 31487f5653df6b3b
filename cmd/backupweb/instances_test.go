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
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/testkit"
	"github.com/backupweb/backupweb/internal/testkit/logtest"
	"github.com/backupweb/backupweb/internal/testkit/oidctest"
	"github.com/backupweb/backupweb/internal/testkit/redistest"
)

const (
	instancesKey   = "0123456789abcdef0123456789abcdef0123456789abcdef"
	redisPassword  = "redis-pass-for-tests"
	instanceCookie = "backupweb_session"
)

// instance is one running `backupweb serve`.
type instance struct {
	url    string
	stderr *logtest.Buffer
}

// startInstance runs serve in-process with the configuration conf until
// the test ends, with the secret key and the Redis password in its
// environment.
func startInstance(t testing.TB, conf string) *instance {
	t.Helper()
	addr, stderr := serveInProcess(t, t.TempDir(), conf, map[string]string{"BACKUP_SECRET_KEY": instancesKey, "REDIS_PASSWORD": redisPassword})
	return &instance{url: "http://" + addr, stderr: stderr}
}

// roundRobin is a front that sends each request to the next instance.
func roundRobin(t testing.TB, targets ...string) *httptest.Server {
	var n atomic.Uint64
	var urls []*url.URL
	for _, s := range targets {
		u, _ := url.Parse(s)
		urls = append(urls, u)
	}
	front := httptest.NewServer(&httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(urls[n.Add(1)%uint64(len(urls))])
		r.Out.Host = r.In.Host
	}})
	t.Cleanup(front.Close)
	return front
}

var noRedirect = &http.Client{
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	Timeout:       10 * time.Second,
}

// send makes a request with the session cookie value sid (if any) and
// returns the status and body.
func send(t testing.TB, method, target, sid string, form url.Values, accept string) (int, string, http.Header) {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, _ := http.NewRequest(method, target, body)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	if sid != "" {
		req.AddCookie(&http.Cookie{Name: instanceCookie, Value: sid})
	}
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

// signIn logs name in with password through base's login form and
// returns the session cookie's value, or the status when it was refused.
func signIn(t testing.TB, base, name, password string) (sid string, status int) {
	t.Helper()
	resp := testkit.Post(t, testkit.Client(), testkit.Login{Page: base + "/login", User: name, Password: password, Next: "/"})
	for _, c := range resp.Cookies() {
		if c.Name == instanceCookie && c.Value != "" {
			return c.Value, resp.StatusCode
		}
	}
	return "", resp.StatusCode
}

// signOut posts the logout form of sid's session to base.
func signOut(t testing.TB, base, sid string) {
	t.Helper()
	code, page, _ := send(t, "GET", base+"/", sid, nil, "text/html")
	tok := testkit.FormToken([]byte(page))
	if code != http.StatusOK || tok == "" {
		t.Fatalf("no logout form on the catalog page (%d)", code)
	}
	if code, _, _ := send(t, "POST", base+"/logout", sid, url.Values{"csrf_token": {tok}}, ""); code != http.StatusSeeOther {
		t.Fatalf("logout: %d", code)
	}
}

// redisConfig is the configuration of an instance of flask-login with
// the users of users, sharing srv, with extra lines in [redis] and in
// [authentication].
func redisConfig(srv *redistest.Server, dir, users, redisExtra, authExtra string) string {
	return fmt.Sprintf(`[server]
listen = 127.0.0.1:0
store = redis
state_dir = %s
access_log = false
[redis]
url = %s
password = ${REDIS_PASSWORD}
%s
[backups]
dir = %s
[authentication]
type = flask-login
use_bcrypt = true
users_file = %s
%s`, filepath.Join(dir, "state"), srv.URL(), redisExtra, dir, users, authExtra)
}

// addUsers writes a user file in dir with each name, password "pw-NAME".
func addUsers(t testing.TB, dir string, names ...string) string {
	users := filepath.Join(dir, "users.txt")
	for _, u := range names {
		if code, _, errs := runUserCmd("pw-"+u+"\n", "add", "-file", users, "-cost", "4", u); code != 0 {
			t.Fatalf("user add %s: %s", u, errs)
		}
	}
	return users
}

// twoInstances starts a Redis server with a password and two instances of
// flask-login sharing it, and returns them with the user file.
func twoInstances(t *testing.T, extra string) (a, b *instance, users string) {
	srv := redistest.Start(t, redistest.Options{Password: redisPassword})
	dir := t.TempDir()
	users = addUsers(t, dir, "alice", "bob")
	conf := redisConfig(srv, dir, users, "prefix = pair:", extra)
	return startInstance(t, conf), startInstance(t, conf), users
}

// TestTwoInstancesShareSessions runs two instances on one Redis behind a
// round-robin front: a login on one works on the other, a logout on one
// is refused by the other, and removing the user ends their sessions on
// both.
func TestTwoInstancesShareSessions(t *testing.T) {
	a, b, users := twoInstances(t, "")
	front := roundRobin(t, a.url, b.url)

	// Through the front, every other request lands on the other instance.
	sid, code := signIn(t, front.URL, "alice", "pw-alice")
	if sid == "" {
		t.Fatalf("login through the front: %d", code)
	}
	for i := range 4 {
		if code, body, _ := send(t, "GET", front.URL+"/api/me", sid, nil, ""); code != http.StatusOK || !strings.Contains(body, `"alice"`) {
			t.Fatalf("request %d through the front: %d %s", i, code, body)
		}
	}
	for _, in := range []*instance{a, b} {
		if code, _, _ := send(t, "GET", in.url+"/api/me", sid, nil, ""); code != http.StatusOK {
			t.Fatalf("%s: %d", in.url, code)
		}
	}

	// Logout on B: the same cookie is refused on A.
	// (A refuses once Redis's invalidation reaches it: within a
	// millisecond or two, see TestRevocationDelay.)
	signOut(t, b.url, sid)
	testkit.WaitUntil(t, 10*time.Second, func() bool {
		code, _, _ := send(t, "GET", a.url+"/api/me", sid, nil, "")
		if code != http.StatusOK && code != http.StatusUnauthorized {
			t.Fatalf("after logout on B, A answers %d", code)
		}
		return code == http.StatusUnauthorized
	}, func() string { return "the condition was not met" })

	// `backupweb user del` ends alice's sessions on both instances; bob's
	// stay.
	alice, _ := signIn(t, a.url, "alice", "pw-alice")
	bob, _ := signIn(t, b.url, "bob", "pw-bob")
	for _, in := range []*instance{a, b} {
		if code, _, _ := send(t, "GET", in.url+"/api/me", alice, nil, ""); code != http.StatusOK {
			t.Fatalf("before user del, %s: %d", in.url, code)
		}
	}
	if code, _, errs := runUserCmd("", "del", "-file", users, "alice"); code != 0 {
		t.Fatalf("user del: %s", errs)
	}
	for _, in := range []*instance{a, b} {
		code := 0
		testkit.WaitUntil(t, 15*time.Second, func() bool {
			code, _, _ = send(t, "GET", in.url+"/api/me", alice, nil, "")
			if code != http.StatusOK && code != http.StatusUnauthorized {
				t.Fatalf("after user del, %s answers %d", in.url, code)
			}
			return code == http.StatusUnauthorized
		}, func() string { return fmt.Sprintf("after user del, %s answers %d", in.url, code) })
		if code, _, _ := send(t, "GET", in.url+"/api/me", bob, nil, ""); code != http.StatusOK {
			t.Fatalf("after alice was removed, bob gets %d on %s", code, in.url)
		}
	}
}

// TestTwoInstancesShareFailureCounts: wrong passwords sent alternately to
// two instances reach the limit as if sent to one.
func TestTwoInstancesShareFailureCounts(t *testing.T) {
	a, b, _ := twoInstances(t, "max_failures = 4\n")
	for i, in := range []*instance{a, b, a, b} {
		if _, code := signIn(t, in.url, "alice", "wrong"); code != http.StatusUnauthorized {
			t.Fatalf("attempt %d: %d, want 401", i+1, code)
		}
	}
	for i, in := range []*instance{a, b} {
		if _, code := signIn(t, in.url, "alice", "pw-alice"); code != http.StatusTooManyRequests {
			t.Fatalf("attempt %d after four failures split over two instances: %d, want 429", 5+i, code)
		}
	}
}

// TestRevocationDelay measures, over real HTTP, how long after a logout
// acknowledged by instance A instance B still accepts the old cookie, and
// reports the distribution. B has served the session just before, so it
// has it cached.
func TestRevocationDelay(t *testing.T) {
	a, b, _ := twoInstances(t, "")
	const trials = 200
	delays := make([]time.Duration, 0, trials)
	for i := range trials {
		sid, _ := signIn(t, a.url, "alice", "pw-alice")
		for range 2 {
			if code, _, _ := send(t, "GET", b.url+"/api/me", sid, nil, ""); code != http.StatusOK {
				t.Fatalf("trial %d: B answers %d before the logout", i, code)
			}
		}
		signOut(t, a.url, sid)
		start := time.Now()
		for {
			code, _, _ := send(t, "GET", b.url+"/api/me", sid, nil, "")
			if code == http.StatusUnauthorized {
				break
			}
			if code != http.StatusOK || time.Since(start) > 5*time.Second {
				t.Fatalf("trial %d: B answers %d %v after the logout on A", i, code, time.Since(start))
			}
		}
		delays = append(delays, time.Since(start))
	}
	slices.Sort(delays)
	t.Logf("revocation delay over %d trials (logout acknowledged by A to B refusing, including B's answer): p50 %v, p99 %v, max %v",
		trials, delays[trials/2], delays[trials*99/100], delays[trials-1])
}

// TestRedisOutage: with Redis stopped, a signed-in request and a login
// get 503 with Retry-After (a page for browsers), never 200 and never a
// sign-out, and /readyz is 503; when Redis is back the same cookie works
// without a restart; when Redis comes back empty, the user signs in again.
func TestRedisOutage(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{Password: redisPassword, Persist: true})
	dir := t.TempDir()
	in := startInstance(t, redisConfig(srv, dir, addUsers(t, dir, "alice"), "command_timeout = 500ms", ""))
	sid, _ := signIn(t, in.url, "alice", "pw-alice")
	if code, _, _ := send(t, "GET", in.url+"/readyz", "", nil, ""); code != http.StatusOK {
		t.Fatalf("/readyz before the outage: %d", code)
	}

	srv.Stop()
	// Until the instance's connection has seen the server go (at once),
	// a request may still be answered from the cache, as a moment before.
	testkit.WaitUntil(t, 10*time.Second, func() bool {
		code, _, _ := send(t, "GET", in.url+"/api/me", sid, nil, "")
		return code != http.StatusOK
	}, func() string { return "the condition was not met" })
	for range 3 {
		code, body, h := send(t, "GET", in.url+"/", sid, nil, "text/html")
		if code != http.StatusServiceUnavailable || h.Get("Retry-After") == "" || !strings.Contains(body, "<html") {
			t.Fatalf("signed-in page during the outage: %d, Retry-After %q, body %.80q; want 503 with the error page", code, h.Get("Retry-After"), body)
		}
		if !strings.Contains(body, "the session store does not answer") || strings.Contains(body, "busy") {
			t.Fatalf("the outage page does not say what is down: %s", body)
		}
		if h.Get("Set-Cookie") != "" {
			t.Fatal("the outage cleared the cookie: a silent sign-out")
		}
		if code, body, _ := send(t, "GET", in.url+"/api/me", sid, nil, ""); code != http.StatusServiceUnavailable || !strings.Contains(body, `"error":"Sign-in is unavailable right now: the session store does not answer.`) {
			t.Fatalf("API during the outage: %d %s", code, body)
		}
	}
	if _, code := signIn(t, in.url, "alice", "pw-alice"); code != http.StatusServiceUnavailable {
		t.Fatalf("login during the outage: %d, want 503", code)
	}
	if code, body, _ := send(t, "GET", in.url+"/readyz", "", nil, ""); code != http.StatusServiceUnavailable || !strings.Contains(body, "shared store") {
		t.Fatalf("/readyz during the outage: %d %q", code, body)
	}

	srv.Start()
	testkit.WaitUntil(t, 10*time.Second, func() bool {
		code, _, _ := send(t, "GET", in.url+"/api/me", sid, nil, "")
		return code == http.StatusOK
	}, func() string { return "the condition was not met" })
	if code, _, _ := send(t, "GET", in.url+"/readyz", "", nil, ""); code != http.StatusOK {
		t.Fatalf("/readyz after the outage: %d", code)
	}
	log := in.stderr.String()
	if strings.Count(log, "redis: not answering") != 1 || strings.Count(log, "redis: answering again") != 1 {
		t.Errorf("want one line at the start of the outage and one at its end:\n%s", log)
	}
	if strings.Contains(log, redisPassword) {
		t.Error("the Redis password was logged")
	}

	srv.Stop()
	srv.Persist(false)
	srv.Start()
	testkit.WaitUntil(t, 10*time.Second, func() bool {
		code, _, _ := send(t, "GET", in.url+"/api/me", sid, nil, "")
		return code == http.StatusUnauthorized
	}, func() string { return "the condition was not met" })
	if sid, code := signIn(t, in.url, "alice", "pw-alice"); sid == "" {
		t.Fatalf("login after Redis came back empty: %d", code)
	}
}

// TestTwoInstancesOAuthStateOnce: a callback redeemed on one instance is
// refused when replayed, cookie and all, on the other.
func TestTwoInstancesOAuthStateOnce(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{Password: redisPassword})
	front := httptest.NewUnstartedServer(nil)
	front.Start()
	t.Cleanup(front.Close)
	op := oidctest.Start(t, oidctest.Options{
		Users:   []oidctest.User{{Username: "carol", Password: "pw", Email: "carol@example.com", EmailVerified: true}},
		Clients: []oidctest.Client{{ID: "pair", Secret: "s", RedirectURIs: []string{front.URL + "/oauth/callback"}}},
	})
	dir := t.TempDir()
	conf := fmt.Sprintf(`[server]
listen = 127.0.0.1:0
store = redis
state_dir = %s
[redis]
url = %s
password = ${REDIS_PASSWORD}
[authentication]
type = oauth
provider = generic
issuer = %s
client_id = pair
client_secret = s
redirect_uri = %s/oauth/callback
authorized_domains = example.com
`, filepath.Join(dir, "state"), srv.URL(), op.Issuer, front.URL)
	a, b := startInstance(t, conf), startInstance(t, conf)

	// The browser starts on A and signs in at the provider; the
	// provider's redirect to the callback is caught.
	jar, _ := cookiejar.New(nil)
	var callback *url.URL
	c := &http.Client{Jar: jar, Timeout: 10 * time.Second, CheckRedirect: func(r *http.Request, _ []*http.Request) error {
		if r.URL.Path == "/oauth/callback" {
			callback = r.URL
			return http.ErrUseLastResponse
		}
		return nil
	}}
	page, err := c.Get(a.url + "/oauth/login?next=/")
	if err != nil {
		t.Fatal(err)
	}
	resp, err := op.SubmitLogin(c, page, "carol", "pw")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if callback == nil {
		t.Fatalf("no redirect to the callback (last %d at %s)", resp.StatusCode, resp.Request.URL)
	}
	var flowCookies []*http.Cookie
	au, _ := url.Parse(a.url)
	for _, ck := range jar.Cookies(au) {
		if strings.Contains(ck.Name, "oauth") || strings.Contains(ck.Name, "flow") {
			flowCookies = append(flowCookies, ck)
		}
	}
	if len(flowCookies) == 0 {
		t.Fatalf("no sign-in cookie in the jar: %v", jar.Cookies(au))
	}
	redeem := func(base string) int {
		req, _ := http.NewRequest("GET", base+callback.RequestURI(), nil)
		for _, ck := range flowCookies {
			req.AddCookie(ck)
		}
		resp, err := noRedirect.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := redeem(a.url); code != http.StatusSeeOther && code != http.StatusFound {
		t.Fatalf("callback on A: %d, want a redirect into the service", code)
	}
	if code := redeem(b.url); code != http.StatusBadRequest {
		t.Fatalf("the same callback replayed on B: %d, want 400 (state already used)", code)
	}
}

// TestServeStartsWhileRedisDown: serve starts and listens with Redis
// unreachable, answers /readyz and logins with 503, and serves once Redis
// is up, without a restart.
func TestServeStartsWhileRedisDown(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{Password: redisPassword})
	srv.Stop()
	dir := t.TempDir()
	in := startInstance(t, redisConfig(srv, dir, addUsers(t, dir, "alice"), "", ""))
	if code, _, _ := send(t, "GET", in.url+"/readyz", "", nil, ""); code != http.StatusServiceUnavailable {
		t.Fatalf("/readyz with Redis down: %d", code)
	}
	if code, _, _ := send(t, "GET", in.url+"/healthz", "", nil, ""); code != http.StatusOK {
		t.Fatalf("/healthz with Redis down: %d, want 200 (the process runs)", code)
	}
	if _, code := signIn(t, in.url, "alice", "pw-alice"); code != http.StatusServiceUnavailable {
		t.Fatalf("login with Redis down: %d, want 503", code)
	}
	srv.Start()
	testkit.WaitUntil(t, 10*time.Second, func() bool { code, _, _ := send(t, "GET", in.url+"/readyz", "", nil, ""); return code == http.StatusOK }, func() string { return "the condition was not met" })
	if sid, code := signIn(t, in.url, "alice", "pw-alice"); sid == "" {
		t.Fatalf("login once Redis is up: %d", code)
	}
}
