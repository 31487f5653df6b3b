package web

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/backupweb/backupweb/internal/access"
	"github.com/backupweb/backupweb/internal/auth/none"
	"github.com/backupweb/backupweb/internal/catalog"
	"github.com/backupweb/backupweb/internal/peer"
	"github.com/backupweb/backupweb/internal/proxy"
)

// hostRules are "* ^/ deny" limited to app.example.com, with
// backups.example.com as public_url's host.
func hostRules(t *testing.T) *access.Rules {
	t.Helper()
	r, err := access.ParseRule("rule1", "* ^/ deny", false)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.SetHosts([]string{"app.example.com"}); err != nil {
		t.Fatal(err)
	}
	return &access.Rules{List: []access.Rule{r}, PublicHost: "backups.example.com"}
}

// rawStatus sends a request written by hand (so that the Host header and
// the request target are exactly the client's) and returns the status, the
// Content-Type and the body.
func rawStatus(t *testing.T, addr, head string) (int, string, string) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := io.WriteString(c, head+"Connection: close\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("%q: %v", head, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Content-Type"), string(body)
}

// TestServedHostsOnly: when a rule names hosts, catalog and proxy modes
// answer for those and public_url's host only: every other Host form
// (another name, an address, a look-alike, none, an absolute target for
// another host) gets 421 as JSON or the styled page, with an "auth
// refused" line; the probes and the stylesheet answer any host; forward-auth mode leaves an
// unnamed forwarded host to the default.
func TestServedHostsOnly(t *testing.T) {
	dir := t.TempDir()
	must(t, os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a"), 0o600))
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "upstream page") }))
	defer up.Close()
	upURL, _ := url.Parse(up.URL)

	refused := []struct{ name, head string }{
		{"another name", "GET /api/me HTTP/1.1\r\nHost: other.example.com\r\n"},
		{"an address", "GET /api/me HTTP/1.1\r\nHost: 127.0.0.1\r\n"},
		{"an IPv6 address", "GET /api/me HTTP/1.1\r\nHost: [::1]:8080\r\n"},
		{"a look-alike suffix", "GET /api/me HTTP/1.1\r\nHost: app.example.com.evil.net\r\n"},
		{"a look-alike prefix", "GET /api/me HTTP/1.1\r\nHost: xapp.example.com\r\n"},
		{"a sub-domain", "GET /api/me HTTP/1.1\r\nHost: www.app.example.com\r\n"},
		{"no Host (HTTP/1.0)", "GET /api/me HTTP/1.0\r\n"},
		{"an absolute target for another host", "GET http://other.example.com/api/me HTTP/1.1\r\nHost: app.example.com\r\n"},
	}
	for _, mode := range []string{"catalog", "proxy", "forward-auth"} {
		t.Run(mode, func(t *testing.T) {
			log, buf := quietLogger()
			o := Options{Provider: none.Provider{}, Logger: log, Rules: hostRules(t),
				Resolver: peer.NewResolver([]netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")})}
			switch mode {
			case "catalog":
				o.Catalog = catalog.New(dir)
			case "proxy":
				o.Proxy = proxy.New(proxy.Options{Upstream: upURL, Logger: log})
			case "forward-auth":
				o.NoCatalog = true
			}
			srv := httptest.NewServer(NewHandler(o))
			defer srv.Close()
			addr := srv.Listener.Addr().String()

			if mode == "forward-auth" {
				for host, want := range map[string]int{"other.example.com": 200, "APP.example.com.": 403, "backups.example.com": 200} {
					head := "GET " + RequestAuthPath + " HTTP/1.1\r\nHost: backups.example.com\r\nX-Original-Method: GET\r\nX-Original-URI: /x\r\nX-Original-Host: " + host + "\r\n"
					if code, _, _ := rawStatus(t, addr, head); code != want {
						t.Errorf("forwarded host %s: %d, want %d (the default decides)", host, code, want)
					}
				}
				if code, _, _ := rawStatus(t, addr, "GET /login-nowhere HTTP/1.1\r\nHost: other.example.com\r\n"); code == http.StatusMisdirectedRequest {
					t.Errorf("forward-auth mode answers 421")
				}
				return
			}
			for _, c := range []struct {
				host string
				want int
			}{
				{"app.example.com", 403},
				{"APP.Example.COM.:8080", 403},
				{"backups.example.com", 200},
				{"Backups.Example.Com:443", 200},
			} {
				if code, _, body := rawStatus(t, addr, "GET /api/me HTTP/1.1\r\nHost: "+c.host+"\r\n"); code != c.want {
					t.Errorf("Host %s: %d, want %d: %s", c.host, code, c.want, body)
				}
			}
			for _, c := range refused {
				code, ctype, body := rawStatus(t, addr, c.head+"Accept: application/json\r\n")
				var e struct{ Error string }
				if code != http.StatusMisdirectedRequest || json.Unmarshal([]byte(body), &e) != nil || e.Error == "" {
					t.Errorf("%s, JSON: %d %s %q, want 421 with a JSON error", c.name, code, ctype, body)
				}
				code, ctype, body = rawStatus(t, addr, strings.Replace(c.head, "/api/me", "/", 1)+"Accept: text/html\r\n")
				if code != http.StatusMisdirectedRequest || !strings.HasPrefix(ctype, "text/html") || !strings.Contains(body, "stylesheet") {
					t.Errorf("%s, page: %d %s, want 421 with the styled page", c.name, code, ctype)
				}
				if strings.Contains(body, "upstream page") {
					t.Errorf("%s: the upstream answered", c.name)
				}
			}
			for _, probe := range []string{"/healthz", "/readyz", "/_backupweb/style.css"} {
				if code, _, _ := rawStatus(t, addr, "GET "+probe+" HTTP/1.1\r\nHost: 10.1.2.3\r\n"); code != 200 {
					t.Errorf("%s for another host: %d, want 200", probe, code)
				}
			}
			logs := buf.String()
			if n := strings.Count(logs, `reason="host not served"`); n != 2*len(refused) {
				t.Errorf("%d refusal lines, want %d:\n%s", n, 2*len(refused), logs)
			}
			for _, want := range []string{`msg="auth refused"`, "level=WARN", `detail="host other.example.com"`} {
				if !strings.Contains(logs, want) {
					t.Errorf("the log lacks %s:\n%s", want, logs)
				}
			}
		})
	}
}

// TestHidingReadsTheOneReading: the catalog hides a folder as the rules
// decide the request's own reading for the folder's path, so a listing
// that names DELETE in any spelling hides the folder that a DELETE rule
// denies, as the rules would refuse DELETE there.
func TestHidingReadsTheOneReading(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"db", "web"} {
		must(t, os.MkdirAll(filepath.Join(dir, d), 0o755))
		must(t, os.WriteFile(filepath.Join(dir, d, "x.tar"), []byte("x"), 0o600))
	}
	r, err := access.ParseRule("rule1", "DELETE ^/backups/db/ deny", false)
	if err != nil {
		t.Fatal(err)
	}
	log, _ := quietLogger()
	srv := httptest.NewServer(NewHandler(Options{Provider: none.Provider{}, Logger: log, Catalog: catalog.New(dir), Rules: &access.Rules{List: []access.Rule{r}}}))
	defer srv.Close()
	for _, c := range []struct {
		name, query, header string
		hidden              bool
	}{
		{"plain", "", "", false},
		{"?_method", "&_method=DELETE", "", true},
		{"; joined, any case", "&x=1;_METHOD=delete", "", true},
		{"underscored header", "", "X_HTTP_Method_Override", true},
		{"look-alike", "&method=DELETE", "X-HTTP-Methods", false},
	} {
		req, _ := http.NewRequest("GET", srv.URL+"/api/backups?path="+c.query, nil)
		if c.header != "" {
			req.Header[c.header] = []string{"DELETE"}
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var page struct {
			Folders []struct{ Name string }
		}
		err = json.NewDecoder(resp.Body).Decode(&page)
		resp.Body.Close()
		if resp.StatusCode != 200 || err != nil {
			t.Fatalf("%s: %d %v", c.name, resp.StatusCode, err)
		}
		var names []string
		for _, f := range page.Folders {
			names = append(names, f.Name)
		}
		if hidden := !slices.Contains(names, "db/") && !slices.Contains(names, "db"); hidden != c.hidden || len(names) == 0 {
			t.Errorf("%s: folders %q, db hidden %v, want %v", c.name, names, hidden, c.hidden)
		}
	}
}
