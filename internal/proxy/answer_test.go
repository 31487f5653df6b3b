package proxy_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/auth/basic"
	"github.com/backupweb/backupweb/internal/proxy"
	"github.com/backupweb/backupweb/internal/testkit"
)

// appUpstream is an application that sets its own caching headers on some
// answers, none on others, redirects to its own address and reports the
// Host it was asked for.
func appUpstream(t *testing.T) *httptest.Server {
	var self string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/app.js":
			w.Header().Set("Cache-Control", "public, max-age=86400")
			w.Header().Set("ETag", `"v1"`)
			io.WriteString(w, "console.log(1)")
		case "/plain":
			io.WriteString(w, "no caching headers")
		case "/go":
			w.Header().Set("Content-Location", self+"/doc")
			http.Redirect(w, r, self+"/after?x=1", http.StatusFound)
		case "/elsewhere":
			http.Redirect(w, r, "http://other.example/x", http.StatusFound)
		case "/relative":
			http.Redirect(w, r, "/after", http.StatusFound)
		case "/host":
			io.WriteString(w, r.Host)
		default:
			http.NotFound(w, r)
		}
	}))
	self = srv.URL
	t.Cleanup(srv.Close)
	return srv
}

func basicSetup(t testing.TB) func(string, *slog.Logger) auth.Provider {
	hash := testkit.Hash(t, "pw")
	return func(_ string, log *slog.Logger) auth.Provider {
		return mustBasic(t, basic.Config{Username: "api", Password: hash, UseBcrypt: true}, auth.Deps{Logger: log})
	}
}

// get asks g for path with the Basic credentials, without following
// redirects, and returns the answer with its body read.
func get(t *testing.T, g guarded, path string, mod func(*http.Request)) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", g.url+path, nil)
	req.SetBasicAuth("api", "pw")
	if mod != nil {
		mod(req)
	}
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(body)
}

// TestProxyKeepsCachingHeaders: a proxied answer carries the application's
// own Cache-Control and nothing of ours; one without caching headers gets
// none; backupweb's own answers (its refusals, its pages) keep no-store.
func TestProxyKeepsCachingHeaders(t *testing.T) {
	up := appUpstream(t)
	g := guardWith(t, up.URL, proxy.Options{}, basicSetup(t))

	resp, _ := get(t, g, "/app.js", nil)
	if cc := resp.Header.Values("Cache-Control"); len(cc) != 1 || cc[0] != "public, max-age=86400" || resp.Header.Get("ETag") != `"v1"` {
		t.Errorf("the application's caching headers: Cache-Control %q, ETag %q", cc, resp.Header.Get("ETag"))
	}
	resp, _ = get(t, g, "/plain", nil)
	if cc := resp.Header.Values("Cache-Control"); resp.StatusCode != 200 || len(cc) != 0 {
		t.Errorf("an answer without caching headers got %q (status %d)", cc, resp.StatusCode)
	}
	// Ours: the refusal before the upstream, and the error page.
	resp, _ = get(t, g, "/app.js", func(r *http.Request) { r.Header.Del("Authorization") })
	if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("Cache-Control") != "no-store" {
		t.Errorf("refusal: %d, Cache-Control %q", resp.StatusCode, resp.Header.Get("Cache-Control"))
	}
	for _, own := range []string{"/healthz", "/auth/request"} {
		if resp, _ = get(t, g, own, nil); resp.Header.Get("Cache-Control") != "no-store" {
			t.Errorf("backupweb's own %s: Cache-Control %q", own, resp.Header.Get("Cache-Control"))
		}
	}
}

// TestProxyHostAndRedirects: by default the upstream sees its own address
// as Host and a redirect to that address reaches the client rewritten to
// the client's host; pass_host_header sends the client's Host; with
// rewrite_redirects off Location passes as written. Other hosts and
// relative references are never touched.
func TestProxyHostAndRedirects(t *testing.T) {
	up := appUpstream(t)
	upHost := strings.TrimPrefix(up.URL, "http://")
	for _, tt := range []struct {
		name           string
		o              proxy.Options
		host           string // what the upstream must see: "" for the client's
		rewritten      bool
		forwardedHTTPS bool
	}{
		{"defaults", proxy.Options{RewriteRedirects: true}, upHost, true, false},
		{"pass host header", proxy.Options{RewriteRedirects: true, PassHostHeader: true}, "", true, false},
		{"no rewriting", proxy.Options{}, upHost, false, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			g := guardWith(t, up.URL, tt.o, basicSetup(t))
			client := strings.TrimPrefix(g.url, "http://")
			want := tt.host
			if want == "" {
				want = client
			}
			if _, body := get(t, g, "/host", nil); body != want {
				t.Errorf("the upstream saw Host %q, want %q", body, want)
			}
			resp, _ := get(t, g, "/go", nil)
			loc, cloc := resp.Header.Get("Location"), resp.Header.Get("Content-Location")
			if tt.rewritten {
				if loc != g.url+"/after?x=1" || cloc != g.url+"/doc" {
					t.Errorf("Location %q, Content-Location %q; want them on %s", loc, cloc, g.url)
				}
			} else if loc != up.URL+"/after?x=1" || cloc != up.URL+"/doc" {
				t.Errorf("Location %q, Content-Location %q; want them as the upstream wrote them", loc, cloc)
			}
			if resp, _ := get(t, g, "/elsewhere", nil); resp.Header.Get("Location") != "http://other.example/x" {
				t.Errorf("another host's Location became %q", resp.Header.Get("Location"))
			}
			if resp, _ := get(t, g, "/relative", nil); resp.Header.Get("Location") != "/after" {
				t.Errorf("a relative Location became %q", resp.Header.Get("Location"))
			}
		})
	}
}

// TestProxyRedirectsToPublicURL: with [server] public_url, a redirect to
// the upstream's address is rewritten to the public URL, whatever Host the
// client sent.
func TestProxyRedirectsToPublicURL(t *testing.T) {
	up := appUpstream(t)
	public, _ := url.Parse("https://backups.example.com")
	g := guardWith(t, up.URL, proxy.Options{RewriteRedirects: true, PublicURL: public}, basicSetup(t))
	for _, host := range []string{"", "evil.example"} {
		resp, _ := get(t, g, "/go", func(r *http.Request) {
			if host != "" {
				r.Host = host
			}
		})
		if loc := resp.Header.Get("Location"); loc != "https://backups.example.com/after?x=1" {
			t.Errorf("Host %q: Location %q, want it on the public URL", host, loc)
		}
	}
}
