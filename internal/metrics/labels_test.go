package metrics_test

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/auth/oauth"
	"github.com/backupweb/backupweb/internal/catalog"
	"github.com/backupweb/backupweb/internal/metrics"
	"github.com/backupweb/backupweb/internal/testkit"
	"github.com/backupweb/backupweb/internal/testkit/clocktest"
	"github.com/backupweb/backupweb/internal/testkit/logtest"
	"github.com/backupweb/backupweb/internal/web"
)

// series counts the series of the metric family name in a scrape.
func series(body, name string) int {
	n := 0
	for _, line := range strings.Split(body, "\n") {
		if strings.HasPrefix(line, name+"{") {
			n++
		}
	}
	return n
}

// TestClientTextCreatesNoSeries: 1,000 OAuth callbacks, each with a fresh
// sign-in and its own error= value, add one series (the fixed reason
// "identity provider refused"), not one per value; the values reach the
// log's detail, never /metrics.
func TestClientTextCreatesNoSeries(t *testing.T) {
	m := metrics.New()
	// One address may begin 20 sign-ins a minute: the clock moves a
	// minute after every 20.
	clock := clocktest.New(time.Now())
	logs := &logtest.Buffer{}
	log := slog.New(slog.NewTextHandler(logs, nil))
	idp := httptest.NewServer(http.NotFoundHandler()) // never reached: no code is redeemed
	defer idp.Close()
	srv := httptest.NewUnstartedServer(nil)
	base := "http://" + srv.Listener.Addr().String()
	p, err := oauth.New(oauth.Config{Provider: "generic", ClientID: "id", ClientSecret: "s", RedirectURL: base + oauth.CallbackPath,
		AuthURL: idp.URL + "/authorize", TokenURL: idp.URL + "/token", UserinfoURL: idp.URL + "/userinfo",
		Rule: oauth.Rule{Domains: []string{"example.com"}}},
		auth.Deps{Logger: log, SecretKey: []byte(strings.Repeat("k", 32)), StateDir: t.TempDir(), Hooks: m.Hooks(), Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	srv.Config.Handler = web.NewHandler(web.Options{Provider: p, Catalog: catalog.New(t.TempDir()), Logger: log, Observer: m})
	srv.Start()
	defer srv.Close()
	c := testkit.Client()
	get := func(target string) *http.Response {
		t.Helper()
		resp, err := c.Get(target)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}

	before := scrape(t, m)
	for i := range 1000 {
		if i%20 == 0 {
			clock.Advance(time.Minute)
		}
		resp := get(base + oauth.LoginPath + "?next=/")
		loc, err := url.Parse(resp.Header.Get("Location"))
		if err != nil || loc.Query().Get("state") == "" {
			t.Fatalf("sign-in %d: %d Location %q", i, resp.StatusCode, resp.Header.Get("Location"))
		}
		value := fmt.Sprintf("random_%d_%x", i, i*7919)
		resp = get(base + oauth.CallbackPath + "?state=" + url.QueryEscape(loc.Query().Get("state")) + "&error=" + value)
		if resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("callback %d with error=%s: %d, want 401", i, value, resp.StatusCode)
		}
	}
	body := scrape(t, m)
	if got := value(body, `backupweb_auth_refused_total{reason="identity provider refused",type="oauth"}`); got != 1000 {
		t.Errorf("identity provider refused = %v, want 1000", got)
	}
	if added := series(body, "backupweb_auth_refused_total") - series(before, "backupweb_auth_refused_total"); added != 1 {
		t.Errorf("1,000 distinct error values added %d series, want 1", added)
	}
	if strings.Contains(body, "random_") {
		t.Error("a value the client chose reached /metrics")
	}
	if !strings.Contains(logs.String(), `reason="identity provider refused" client=127.0.0.1 detail="error=random_999_`) {
		t.Errorf("the log lacks the detail of the refusal:\n%.2000s", logs.String())
	}
}

// TestLabelSetsAreFixed: a reason outside the documented sets is counted as
// "other", whoever passes it.
func TestLabelSetsAreFixed(t *testing.T) {
	m := metrics.New()
	for i := range 100 {
		m.Refused("oauth", fmt.Sprintf("identity provider refused: error=%d", i))
		m.SessionsEnded("flask-login", fmt.Sprintf("tampered %d", i), 1)
	}
	m.Refused("basic", auth.ReasonBadCredentials)
	m.SessionsEnded("flask-login", "logout", 1)
	body := scrape(t, m)
	for s, want := range map[string]float64{
		`backupweb_auth_refused_total{reason="other",type="oauth"}`:           100,
		`backupweb_auth_refused_total{reason="bad credentials",type="basic"}`: 1,
		`backupweb_sessions_ended_total{reason="other",type="flask-login"}`:   100,
		`backupweb_sessions_ended_total{reason="logout",type="flask-login"}`:  1,
	} {
		if got := value(body, s); got != want {
			t.Errorf("%s = %v, want %v", s, got, want)
		}
	}
	if n := series(body, "backupweb_auth_refused_total"); n != 2 {
		t.Errorf("%d refused series, want 2", n)
	}
	if n := series(body, "backupweb_sessions_ended_total"); n != 2 {
		t.Errorf("%d ended series, want 2", n)
	}
}
