package oauth

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/catalog"
	"github.com/backupweb/backupweb/internal/testkit/clocktest"
	"github.com/backupweb/backupweb/internal/testkit/logtest"
	"github.com/backupweb/backupweb/internal/web"
)

// testSecretKey is BACKUP_SECRET_KEY in tests.
var testSecretKey = []byte("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef")

// testClock is a clock tests move by hand.
type testClock = clocktest.Clock

func newTestClock() *testClock { return clocktest.New(time.Now()) }

// service is backupweb's web handler on a loopback test server whose
// provider can be replaced between subtests, so that one registered
// redirect_uri serves several configurations.
type service struct {
	t       *testing.T
	srv     *httptest.Server
	URL     string
	handler atomic.Pointer[http.Handler]
	logs    *logtest.Buffer
	clock   *testClock
	p       *Provider
}

// newService reserves a loopback address; call use to serve a provider.
func newService(t *testing.T) *service {
	s := &service{t: t, logs: &logtest.Buffer{}, clock: newTestClock()}
	s.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if h := s.handler.Load(); h != nil {
			(*h).ServeHTTP(w, r)
			return
		}
		http.Error(w, "no provider yet", http.StatusServiceUnavailable)
	}))
	s.URL = "http://" + s.srv.Listener.Addr().String()
	s.srv.Start()
	t.Cleanup(s.srv.Close)
	return s
}

// RedirectURL is the service's redirect_uri.
func (s *service) RedirectURL() string { return s.URL + CallbackPath }

// use builds a provider for cfg (redirect_uri filled in when empty) and
// serves it through the web handler, as the program does.
func (s *service) use(cfg Config, env auth.Deps) *Provider {
	s.t.Helper()
	if cfg.RedirectURL == "" {
		cfg.RedirectURL = s.RedirectURL()
	}
	env.SecretKey = testSecretKey
	if env.StateDir == "" {
		env.StateDir = s.t.TempDir()
	}
	env.Logger = slog.New(slog.NewTextHandler(s.logs, nil))
	env.Now = s.clock.Now
	p, err := New(cfg, env)
	if err != nil {
		s.t.Fatalf("New: %v", err)
	}
	s.t.Cleanup(func() { p.Close() })
	h := web.NewHandler(web.Options{Provider: p, Catalog: catalog.New(s.t.TempDir()), Logger: env.Logger})
	s.handler.Store(&h)
	s.p = p
	return p
}

// browser is an http.Client with a cookie jar that follows redirects.
func browser(t *testing.T) *http.Client {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Jar: jar, Timeout: 30 * time.Second}
}

// noFollow returns a copy of c that stops at the first redirect.
func noFollow(c *http.Client) *http.Client {
	cp := *c
	cp.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &cp
}

// stopAtCallback returns a copy of c that follows redirects until the one
// to the service's callback, which it leaves unfollowed.
func stopAtCallback(c *http.Client) *http.Client {
	cp := *c
	cp.CheckRedirect = func(req *http.Request, _ []*http.Request) error {
		if req.URL.Path == CallbackPath {
			return http.ErrUseLastResponse
		}
		return nil
	}
	return &cp
}

// get fetches u with c as a browser navigation and returns the response
// with its body read.
func get(t *testing.T, c *http.Client, u string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/html")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
	return resp, readBody(t, resp)
}

func readBody(t *testing.T, resp *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// me returns the current-user record /api/me gives c, or the status when
// it is not 200.
func (s *service) me(t *testing.T, c *http.Client) (map[string]string, int) {
	t.Helper()
	resp, err := c.Get(s.URL + "/api/me")
	if err != nil {
		t.Fatal(err)
	}
	body := readBody(t, resp)
	if resp.StatusCode != http.StatusOK {
		return nil, resp.StatusCode
	}
	var rec map[string]any
	if err := json.Unmarshal([]byte(body), &rec); err != nil {
		t.Fatalf("/api/me: %v: %s", err, body)
	}
	out := map[string]string{}
	for k, v := range rec {
		if s, ok := v.(string); ok {
			out[k] = s
		}
	}
	return out, http.StatusOK
}

// flowCookie returns the sign-in cookie c holds for the service.
func (s *service) flowCookie(t *testing.T, c *http.Client) *http.Cookie {
	t.Helper()
	u, _ := url.Parse(s.URL)
	for _, ck := range c.Jar.Cookies(u) {
		if strings.HasPrefix(ck.Name, flowCookiePrefix) {
			return ck
		}
	}
	t.Fatal("no sign-in cookie in the jar")
	return nil
}

// assertNoSecrets fails when the logs hold any of secrets.
func (s *service) assertNoSecrets(t *testing.T, secrets ...string) {
	t.Helper()
	logs := s.logs.String()
	for _, sec := range secrets {
		if sec != "" && strings.Contains(logs, sec) {
			t.Errorf("the log holds a secret (%.6s...):\n%s", sec, logs)
		}
	}
}

// assertLogged fails unless the logs hold a refused-attempt line with all
// of parts.
func (s *service) assertLogged(t *testing.T, parts ...string) {
	t.Helper()
	for line := range strings.SplitSeq(s.logs.String(), "\n") {
		if !strings.Contains(line, "auth") || !strings.Contains(line, "level=WARN") {
			continue
		}
		all := true
		for _, p := range parts {
			all = all && strings.Contains(line, p)
		}
		if all {
			return
		}
	}
	t.Errorf("no warning line with %q in the log:\n%s", parts, s.logs.String())
}

// assertOutage fails unless the logs hold an error line about the identity
// provider with all of parts, and no refused-attempt line: an outage is
// not a refusal.
func (s *service) assertOutage(t *testing.T, parts ...string) {
	t.Helper()
	logs := s.logs.String()
	found := false
	for line := range strings.SplitSeq(logs, "\n") {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(line, p)
		}
		if !all {
			continue
		}
		if strings.Contains(line, "auth refused") {
			t.Errorf("an identity provider failure was logged as a refused attempt: %s", line)
		}
		if strings.Contains(line, "level=ERROR") && strings.Contains(line, "identity provider could not be used") {
			found = true
		}
	}
	if found {
		return
	}
	t.Errorf("no error line about the identity provider with %q in the log:\n%s", parts, logs)
}
