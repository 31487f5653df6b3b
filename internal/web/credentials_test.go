package web

import (
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/backupweb/backupweb/internal/catalog"
	"github.com/backupweb/backupweb/internal/peer"
	"github.com/backupweb/backupweb/internal/proxy"
)

func TestTwoCredentials(t *testing.T) {
	tests := []struct {
		v    string
		want bool
	}{
		{"Basic YWxpY2U6cHc=", false},
		{"Basic YWxpY2U6cHc==", false},
		{"Bearer abc.def-ghi_jkl~mno+/=", false},
		{"Basic", false},
		{"", false},
		{"Basic YWxpY2U6cHc=,", false},
		{" , Basic YWxpY2U6cHc=", false},
		{`Digest username="alice", realm="x, y", nonce="n", uri="/", response="r"`, false},
		{`Digest username="a\"b, c", realm=x`, false},
		{"Basic YWxpY2U6cHc=, Bearer tok", true},
		{"Bearer tok, Basic YWxpY2U6cHc=", true},
		{"Basic YWxpY2U6cHc=,Basic Ym9iOnB3", true},
		{"Basic YWxpY2U6cHc=, YWxpY2U6cHc=", true},
		{"Basic a=, b=", true},
		{`Digest username="alice", Basic YWxpY2U6cHc=`, true},
		{"Negotiate, Basic YWxpY2U6cHc=", true},
		{"Basic YWxpY2U6cHc=, realm=x", true},
	}
	for _, tt := range tests {
		if got := twoCredentials(tt.v); got != tt.want {
			t.Errorf("twoCredentials(%q) = %v, want %v", tt.v, got, tt.want)
		}
	}
}

// FuzzTwoCredentials: never panics; one token68 credential is never two,
// and two of them joined by a comma always are.
func FuzzTwoCredentials(f *testing.F) {
	for _, s := range []string{"Basic YWxpY2U6cHc=", `Digest a="b,c", d=e`, "Basic x, Bearer y", "", ",,,", `"`, `a="\`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		twoCredentials(v)
		tok := strings.Map(func(r rune) rune {
			if r < 128 && (isTokenChar(byte(r)) && r != '=' || r == '/') {
				return r
			}
			return -1
		}, v)
		if tok == "" {
			return
		}
		if twoCredentials("Basic " + tok) {
			t.Errorf("one token68 credential %q read as two", "Basic "+tok)
		}
		if !twoCredentials("Basic " + tok + ", Bearer " + tok) {
			t.Errorf("two credentials joined by a comma read as one: %q", tok)
		}
	})
}

// TestTwoAuthorizationHeaders: in catalog mode, proxy mode and both
// forward-authentication endpoints, a request with two Authorization
// headers or one holding two credentials is answered 400 with an
// "auth refused" line, before the provider (which would admit it: the
// test's provider admits X-Test-User) or the upstream sees it; one
// credential passes as before.
func TestTwoAuthorizationHeaders(t *testing.T) {
	var reached atomic.Int64
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { reached.Add(1) }))
	t.Cleanup(up.Close)
	u, _ := url.Parse(up.URL)
	res := peer.NewResolver([]netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")})
	modes := []struct {
		name, path string
		opts       func(o *Options)
	}{
		{"catalog", "/api/me", func(o *Options) { o.Catalog = catalog.New(fixture(t)) }},
		{"proxy", "/app/x", func(o *Options) { o.Proxy = proxy.New(proxy.Options{Upstream: u, Logger: o.Logger}) }},
		{"forward auth (nginx)", RequestAuthPath, func(o *Options) { o.NoCatalog = true }},
		{"forward auth (traefik, caddy)", ForwardAuthPath, func(o *Options) { o.NoCatalog = true }},
		{"probe", "/healthz", func(o *Options) { o.NoCatalog = true }},
	}
	headers := []struct {
		name   string
		values []string
		want   int
	}{
		{"two headers", []string{"Basic YWxpY2U6cHc=", "Bearer tok"}, http.StatusBadRequest},
		{"the same header twice", []string{"Basic YWxpY2U6cHc=", "Basic YWxpY2U6cHc="}, http.StatusBadRequest},
		{"two credentials in one", []string{"Basic YWxpY2U6cHc=, Bearer tok"}, http.StatusBadRequest},
		{"one credential", []string{"Basic YWxpY2U6cHc="}, http.StatusOK},
	}
	for _, m := range modes {
		for _, h := range headers {
			t.Run(m.name+"/"+h.name, func(t *testing.T) {
				log, buf := quietLogger()
				o := Options{Provider: headerProvider{}, Logger: log, Resolver: res}
				m.opts(&o)
				srv := httptest.NewServer(NewHandler(o))
				t.Cleanup(srv.Close)
				req, _ := http.NewRequest("GET", srv.URL+m.path, nil)
				req.Header.Set("X-Test-User", "alice")
				req.Header.Set("X-Forwarded-Uri", "/x")
				req.Header.Set("X-Original-Uri", "/x")
				for _, v := range h.values {
					req.Header.Add("Authorization", v)
				}
				before := reached.Load()
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode != h.want {
					t.Fatalf("%d, want %d\n%s", resp.StatusCode, h.want, buf)
				}
				refused := strings.Contains(buf.String(), `msg="auth refused" auth_type=basic reason="more than one credential"`)
				if h.want == http.StatusBadRequest {
					if !refused {
						t.Errorf("no auth refused line with its reason:\n%s", buf)
					}
					if reached.Load() != before {
						t.Error("the upstream saw the refused request")
					}
				} else if refused {
					t.Errorf("one credential was refused as two:\n%s", buf)
				}
			})
		}
	}
}
