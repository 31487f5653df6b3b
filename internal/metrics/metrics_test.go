package metrics_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/auth/basic"
	"github.com/backupweb/backupweb/internal/auth/login"
	"github.com/backupweb/backupweb/internal/auth/passwordauth"
	"github.com/backupweb/backupweb/internal/catalog"
	"github.com/backupweb/backupweb/internal/metrics"
	"github.com/backupweb/backupweb/internal/testkit"
	"github.com/backupweb/backupweb/internal/testkit/toolstest"
	"github.com/backupweb/backupweb/internal/tokens"
	"github.com/backupweb/backupweb/internal/web"
)

// scrape returns the metrics text.
func scrape(t *testing.T, m *metrics.Metrics) string {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	return rec.Body.String()
}

// value returns the value of the series (name and labels as exposed), 0
// when absent.
func value(body, series string) float64 {
	for _, line := range strings.Split(body, "\n") {
		if rest, ok := strings.CutPrefix(line, series+" "); ok {
			v, _ := strconv.ParseFloat(strings.TrimSpace(rest), 64)
			return v
		}
	}
	return 0
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// TestBasicFamiliesMove drives a basic-protected server and checks that
// each metric family moves when its event happens.
func TestBasicFamiliesMove(t *testing.T) {
	m := metrics.New()
	hash := testkit.Hash(t, "pw")
	p, err := basic.New(basic.Config{Username: "api", Password: hash, UseBcrypt: true, Throttling: passwordauth.Throttling{MaxFailures: 2}}, auth.Deps{Logger: quiet(), Hooks: m.Hooks()})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(web.NewHandler(web.Options{Provider: p, Catalog: catalog.New(t.TempDir()), Logger: quiet(), Observer: m}))
	defer srv.Close()
	get := func(path, user, pw string) {
		req, _ := http.NewRequest("GET", srv.URL+path, nil)
		if user != "" {
			req.SetBasicAuth(user, pw)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	get("/api/me", "api", "pw")
	get("/api/me", "api", "pw")
	get("/no/such/path", "", "")
	get("/api/me", "api", "wrong")
	get("/api/me", "api", "wrong")
	get("/api/me", "api", "wrong") // throttled
	body := scrape(t, m)
	for series, atLeast := range map[string]float64{
		`backupweb_http_requests_total{code="2xx",route="GET /api/me"}`:         2,
		`backupweb_http_requests_total{code="4xx",route="unmatched"}`:           1,
		`backupweb_http_requests_total{code="4xx",route="GET /api/me"}`:         3,
		`backupweb_http_request_duration_seconds_count{route="GET /api/me"}`:    5,
		`backupweb_auth_refused_total{reason="bad credentials",type="basic"}`:   2,
		`backupweb_auth_refused_total{reason="too many failures",type="basic"}`: 1,
		`backupweb_auth_throttled_total{type="basic"}`:                          1,
		`backupweb_bcrypt_check_duration_seconds_count`:                         3,
		`backupweb_bcrypt_gate_wait_seconds_count`:                              3,
		`backupweb_credential_cache_lookups_total{result="hit"}`:                1,
		`backupweb_credential_cache_lookups_total{result="miss"}`:               3,
		`go_goroutines`: 1,
		`backupweb_build_info{goversion="` + runtimeVersion() + `",revision="` + revision() + `",version="` + version() + `"}`: 1,
	} {
		if got := value(body, series); got < atLeast {
			t.Errorf("%s = %v, want at least %v", series, got, atLeast)
		}
	}
	if strings.Contains(body, "/no/such/path") {
		t.Error("a raw path became a label value")
	}
}

// TestSessionFamiliesMove signs in and out with flask-login.
func TestSessionFamiliesMove(t *testing.T) {
	m := metrics.New()
	dir := t.TempDir()
	hash := testkit.Hash(t, "alice-pw")
	users := filepath.Join(dir, "users")
	os.WriteFile(users, []byte("alice:"+hash+"\n"), 0o600)
	p, err := login.New(login.Config{UsersFile: users, UseBcrypt: true, PollInterval: -1},
		auth.Deps{Logger: quiet(), SecretKey: []byte(strings.Repeat("k", 32)), StateDir: filepath.Join(dir, "state"), Hooks: m.Hooks()})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	m.WatchSessions(p.Type(), p.SessionCount)
	srv := httptest.NewServer(web.NewHandler(web.Options{Provider: p, Catalog: catalog.New(t.TempDir()), Logger: quiet(), Observer: m}))
	defer srv.Close()
	c := testkit.Client()
	token := func(path string) string { return testkit.Token(t, c, srv.URL+path) }
	testkit.SignIn(t, c, testkit.Login{Page: srv.URL + "/login", User: "alice", Password: "alice-pw"})
	if got := value(scrape(t, m), `backupweb_sessions_active{type="flask-login"}`); got != 1 {
		t.Errorf("sessions_active = %v, want 1", got)
	}
	resp, err := c.PostForm(srv.URL+"/logout", url.Values{"csrf_token": {token("/")}})
	if err != nil || resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("logout: %v %v", resp.StatusCode, err)
	}
	resp.Body.Close()
	body := scrape(t, m)
	for series, want := range map[string]float64{
		`backupweb_sign_ins_total{type="flask-login"}`:                       1,
		`backupweb_sign_outs_total{type="flask-login"}`:                      1,
		`backupweb_sessions_started_total{type="flask-login"}`:               1,
		`backupweb_sessions_ended_total{reason="logout",type="flask-login"}`: 1,
		`backupweb_sessions_active{type="flask-login"}`:                      0,
	} {
		if got := value(body, series); got != want {
			t.Errorf("%s = %v, want %v", series, got, want)
		}
	}
	checkWithPromtool(t, body)
}

// TestTokenFamiliesMove uses a machine token, right and wrong: the right
// one is counted as a token request, the wrong one as a refusal under its
// fixed reason.
func TestTokenFamiliesMove(t *testing.T) {
	m := metrics.New()
	dir := t.TempDir()
	users := filepath.Join(dir, "users")
	os.WriteFile(users, []byte("alice:"+testkit.Hash(t, "alice-pw")+"\n"), 0o600)
	p, err := login.New(login.Config{UsersFile: users, UseBcrypt: true, PollInterval: -1},
		auth.Deps{Logger: quiet(), SecretKey: []byte(strings.Repeat("k", 32)), StateDir: filepath.Join(dir, "state"), Hooks: m.Hooks()})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	secret, _, err := p.CreateToken("alice", "metrics", 0, tokens.Scope{}, "test")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(web.NewHandler(web.Options{Provider: p, Catalog: catalog.New(t.TempDir()), Logger: quiet(), Observer: m}))
	defer srv.Close()
	for _, tok := range []string{secret, secret, "bwt_wrong"} {
		req, _ := http.NewRequest("GET", srv.URL+"/api/backups", nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	body := scrape(t, m)
	for series, want := range map[string]float64{
		`backupweb_token_requests_total{type="flask-login"}`:                                 2,
		`backupweb_auth_refused_total{reason="unknown or revoked token",type="flask-login"}`: 1,
		`backupweb_sign_ins_total{type="flask-login"}`:                                       0,
	} {
		if got := value(body, series); got != want {
			t.Errorf("%s = %v, want %v", series, got, want)
		}
	}
	checkWithPromtool(t, body)
}

func TestIdentityProviderCalls(t *testing.T) {
	m := metrics.New()
	idp := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/fail" {
			http.Error(w, "no", http.StatusInternalServerError)
		}
	}))
	defer idp.Close()
	c := m.InstrumentClient("github", nil)
	for _, path := range []string{"/ok", "/fail"} {
		resp, err := c.Get(idp.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	c.Get("http://127.0.0.1:1/unreachable")
	body := scrape(t, m)
	for series, want := range map[string]float64{
		`backupweb_idp_requests_total{outcome="ok",provider="github"}`:    1,
		`backupweb_idp_requests_total{outcome="error",provider="github"}`: 2,
		`backupweb_idp_request_duration_seconds_count{provider="github"}`: 3,
	} {
		if got := value(body, series); got != want {
			t.Errorf("%s = %v, want %v", series, got, want)
		}
	}
}

// checkWithPromtool runs `promtool check metrics` over the exposition.
func checkWithPromtool(t *testing.T, body string) {
	t.Helper()
	promtool := toolstest.Need(t, "promtool", "prometheus")
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = strings.NewReader(body)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("promtool check metrics: %v\n%s", err, out)
	}
}
