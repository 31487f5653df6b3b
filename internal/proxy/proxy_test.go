package proxy_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/access"
	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/auth/basic"
	"github.com/backupweb/backupweb/internal/auth/login"
	"github.com/backupweb/backupweb/internal/auth/none"
	"github.com/backupweb/backupweb/internal/auth/oauth"
	"github.com/backupweb/backupweb/internal/catalog"
	"github.com/backupweb/backupweb/internal/proxy"
	"github.com/backupweb/backupweb/internal/testkit"
	"github.com/backupweb/backupweb/internal/testkit/logtest"
	"github.com/backupweb/backupweb/internal/testkit/oidctest"
	"github.com/backupweb/backupweb/internal/web"
)

// seen is what the upstream saw of a request.
type seen struct {
	Method, RawPath, RawQuery, Body string
	Header                          http.Header
}

// upstream is a real server on loopback: it echoes what it saw, streams
// events, switches protocols and serves a large file.
type upstream struct {
	*httptest.Server
	hits    atomic.Int64
	streams sync.Map // stream id -> chan string
}

// stream returns the channel feeding the event stream id.
func (u *upstream) stream(id string) chan string {
	ch, _ := u.streams.LoadOrStore(id, make(chan string))
	return ch.(chan string)
}

func startUpstream(t testing.TB) *upstream {
	u := &upstream{}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.hits.Add(1)
		switch r.URL.Path {
		case "/events":
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			http.NewResponseController(w).Flush()
			events := u.stream(r.URL.Query().Get("id"))
			for {
				select {
				case ev := <-events:
					fmt.Fprintf(w, "data: %s\n\n", ev)
					http.NewResponseController(w).Flush()
				case <-r.Context().Done():
					return
				}
			}
		case "/socket":
			if r.Header.Get("Upgrade") != "websocket" {
				http.Error(w, "upgrade required", http.StatusBadRequest)
				return
			}
			conn, rw, err := http.NewResponseController(w).Hijack()
			if err != nil {
				return
			}
			defer conn.Close()
			rw.WriteString("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n")
			rw.Flush()
			line, _ := rw.ReadString('\n')
			rw.WriteString("echo " + line)
			rw.Flush()
			return
		case "/big":
			chunk := strings.Repeat("x", 1<<20)
			for range 32 {
				io.WriteString(w, chunk)
			}
			return
		case "/small":
			// A fixed answer whatever the request holds: the benchmarks'
			// page, so that what they compare is backupweb's work, not
			// the upstream echoing the identity headers it was sent.
			io.WriteString(w, "ok")
			return
		case "/slow":
			time.Sleep(2 * time.Second)
			return
		}
		body, _ := io.ReadAll(r.Body)
		json.NewEncoder(w).Encode(seen{Method: r.Method, RawPath: r.URL.EscapedPath(), RawQuery: r.URL.RawQuery, Body: string(body), Header: r.Header})
	}))
	t.Cleanup(u.Close)
	return u
}

// guarded serves backupweb with provider p in front of up.
type guarded struct {
	url  string
	logs *logtest.Buffer
}

func guard(t testing.TB, up string, setup func(base string, log *slog.Logger) auth.Provider) guarded {
	t.Helper()
	return guardWith(t, up, proxy.Options{}, setup)
}

// guardWith is guard with the proxy's options o; the upstream, headers,
// logger and error writer are set as guard sets them, the timeout for the
// upstream's answer when o has none, and the
// provider is the proxy's Rechecker when it is one.
func guardWith(t testing.TB, up string, o proxy.Options, setup func(base string, log *slog.Logger) auth.Provider) guarded {
	t.Helper()
	return guardRules(t, up, o, nil, setup)
}

// guardRules is guardWith with the access rules rs in front of the proxy,
// as the program puts them ([access], with [proxy] skip_auth_routes and
// allow_users folded in by package config).
func guardRules(t testing.TB, up string, o proxy.Options, rs *access.Rules, setup func(base string, log *slog.Logger) auth.Provider) guarded {
	t.Helper()
	logs := &logtest.Buffer{}
	log := slog.New(slog.NewTextHandler(logs, nil))
	var h atomic.Pointer[http.Handler]
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { (*h.Load()).ServeHTTP(w, r) }))
	base := "http://" + srv.Listener.Addr().String()
	target, _ := url.Parse(up)
	p := setup(base, log)
	o.Upstream, o.UserHeader, o.EmailHeader = target, "X-Forwarded-User", "X-Forwarded-Email"
	if o.ResponseHeaderTimeout == 0 {
		// Generous: a real upstream (gunicorn) on a loaded machine may
		// take seconds; the test of a slow upstream sets its own.
		o.ResponseHeaderTimeout = 10 * time.Second
	}
	o.Logger, o.Errors = log, web.NewErrors(log)
	if rc, ok := p.(auth.Rechecker); ok && o.Rechecker == nil {
		o.Rechecker = rc
	}
	handler := web.NewHandler(web.Options{Provider: p, Catalog: catalog.New(t.TempDir()), Logger: log, Rules: rs,
		Proxy: proxy.New(o)})
	h.Store(&handler)
	srv.Start()
	t.Cleanup(srv.Close)
	return guarded{url: base, logs: logs}
}

func jarClient() *http.Client {
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar, Timeout: 20 * time.Second}
}

// signedIn is one authentication type, set up, with a client that has
// signed in (or that sends credentials), and what the upstream must see.
type signedIn struct {
	g           guarded
	client      *http.Client
	mod         func(*http.Request) // adds credentials
	user, email string
}

func setups(t testing.TB, up *upstream) map[string]func() signedIn {
	secret := []byte(strings.Repeat("k", 32))
	hash := testkit.Hash(t, "pw")
	return map[string]func() signedIn{
		"none": func() signedIn {
			g := guard(t, up.URL, func(string, *slog.Logger) auth.Provider { return none.Provider{} })
			return signedIn{g: g, client: jarClient()}
		},
		"basic": func() signedIn {
			g := guard(t, up.URL, basicSetup(t))
			return signedIn{g: g, client: jarClient(), mod: func(r *http.Request) { r.SetBasicAuth("api", "pw") }, user: "api"}
		},
		"flask-login": func() signedIn {
			users := filepath.Join(t.TempDir(), "users")
			os.WriteFile(users, []byte("alice:"+hash+"\n"), 0o600)
			var p *login.Provider
			g := guard(t, up.URL, func(_ string, log *slog.Logger) auth.Provider {
				var err error
				p, err = login.New(login.Config{UsersFile: users, UseBcrypt: true, PollInterval: -1}, auth.Deps{Logger: log, SecretKey: secret, StateDir: t.TempDir()})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { p.Close() })
				return p
			})
			c := jarClient()
			testkit.SignIn(t, c, testkit.Login{Page: g.url + "/login", User: "alice", Password: "pw"})
			return signedIn{g: g, client: c, user: "alice"}
		},
		"oauth": func() signedIn {
			var op *oidctest.Provider
			g := guard(t, up.URL, carolOAuth(t, &op, nil))
			c := jarClient()
			resp := signInCarol(t, c, g.url, op)
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK || up.hits.Load() == 0 {
				t.Fatalf("oauth sign-in did not land on the upstream: %d at %s", resp.StatusCode, resp.Request.URL)
			}
			return signedIn{g: g, client: c, user: "carol@example.com", email: "carol@example.com"}
		},
	}
}

func TestProxyForEveryType(t *testing.T) {
	up := startUpstream(t)
	for name, setup := range setups(t, up) {
		t.Run(name, func(t *testing.T) {
			s := setup()
			do := func(method, target string, body io.Reader, mod func(*http.Request)) *http.Response {
				t.Helper()
				req, _ := http.NewRequest(method, s.g.url+"/", body)
				req.URL.Opaque = target // keep the path escaped as written
				if s.mod != nil {
					s.mod(req)
				}
				if mod != nil {
					mod(req)
				}
				resp, err := s.client.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				return resp
			}

			// Method, escaped path, query, body and headers pass; identity
			// headers are backupweb's; the client's forgeries do not pass.
			resp := do("PUT", "/files/a%2Fb/%C3%BC%20x?x=1&y=%2F", strings.NewReader("payload"), func(r *http.Request) {
				r.Header.Set("X-Forwarded-User", "mallory")
				r.Header.Set("X-Forwarded-Email", "mallory@evil.example")
				r.Header.Set("X-Forwarded-For", "203.0.113.66")
				r.Header.Set("X-Custom", "kept")
				r.Header.Add("Connection", "X-Forwarded-User")
				r.AddCookie(&http.Cookie{Name: "theme", Value: "dark"})
				if s.mod == nil {
					r.Header.Set("Authorization", "Bearer client-token")
				}
			})
			var got seen
			json.NewDecoder(resp.Body).Decode(&got)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d", resp.StatusCode)
			}
			if got.Method != "PUT" || got.RawPath != "/files/a%2Fb/%C3%BC%20x" || got.RawQuery != "x=1&y=%2F" || got.Body != "payload" {
				t.Errorf("upstream saw %s %s ? %s body %q", got.Method, got.RawPath, got.RawQuery, got.Body)
			}
			h := got.Header
			if h.Get("X-Forwarded-User") != s.user || h.Get("X-Forwarded-Email") != s.email {
				t.Errorf("identity headers %q %q, want %q %q", h.Get("X-Forwarded-User"), h.Get("X-Forwarded-Email"), s.user, s.email)
			}
			if h.Get("X-Forwarded-For") != "127.0.0.1" || h.Get("X-Forwarded-Proto") != "http" || h.Get("X-Custom") != "kept" {
				t.Errorf("forwarding headers %v", h)
			}
			if h.Get("Authorization") != "" {
				t.Errorf("Authorization reached the upstream: %q", h.Get("Authorization"))
			}
			if c := h.Get("Cookie"); c != "theme=dark" {
				t.Errorf("Cookie at the upstream %q, want only theme=dark", c)
			}

			// Streaming: the first event arrives before the second is sent.
			resp = do("GET", "/events?id="+name, nil, nil)
			r := bufio.NewReader(resp.Body)
			up.stream(name) <- "one"
			if line, _ := r.ReadString('\n'); line != "data: one\n" {
				t.Errorf("first event %q", line)
			}
			resp.Body.Close()

			// A large download streams through.
			resp = do("GET", "/big", nil, nil)
			n, _ := io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if n != 32<<20 {
				t.Errorf("downloaded %d bytes, want 32 MiB", n)
			}

			// Upgrade handshake (as a WebSocket client sends it).
			if s.mod == nil || name == "basic" {
				upgradeEcho(t, s.g.url, func(req *http.Request) {
					if s.mod != nil {
						s.mod(req)
					}
					for _, c := range s.client.Jar.Cookies(req.URL) {
						req.AddCookie(c)
					}
				})
			}
		})
	}
}

// upgradeEcho sends a WebSocket upgrade of /socket to base (its URL),
// with what mod adds when not nil, on a connection of its own: the answer
// must be 101, and a line must come back through the upgraded connection
// from the upstream's echo.
func upgradeEcho(t *testing.T, base string, mod func(*http.Request)) {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	req, _ := http.NewRequest("GET", base+"/socket", nil)
	req.Header.Set("Upgrade", "websocket")
	req.Header.Set("Connection", "Upgrade")
	if mod != nil {
		mod(req)
	}
	req.Write(conn)
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, req)
	if err != nil || resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("upgrade: %v %v", resp, err)
	}
	fmt.Fprintf(conn, "hello\n")
	if line, _ := br.ReadString('\n'); line != "echo hello\n" {
		t.Errorf("through the upgraded connection: %q", line)
	}
}

func TestProxyRefusesBeforeTheUpstream(t *testing.T) {
	up := startUpstream(t)
	g := guard(t, up.URL, basicSetup(t))
	before := up.hits.Load()
	resp, err := http.Get(g.url + "/anything")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("WWW-Authenticate") == "" || up.hits.Load() != before {
		t.Fatalf("unauthenticated: %d, upstream hit %d times", resp.StatusCode, up.hits.Load()-before)
	}
	// backupweb's own paths stay its own.
	for _, p := range []string{"/healthz", "/readyz", "/_backupweb/style.css"} {
		resp, err := http.Get(g.url + p)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || up.hits.Load() != before {
			t.Errorf("%s: %d, upstream hit", p, resp.StatusCode)
		}
	}
}

func TestUpstreamDownOrSlow(t *testing.T) {
	up := startUpstream(t)
	dead := httptest.NewServer(nil)
	deadURL := dead.URL
	dead.Close()
	for _, tt := range []struct {
		name, upstream, path string
		want                 int
	}{
		{"down", deadURL, "/", http.StatusBadGateway},
		{"slow", up.URL, "/slow", http.StatusGatewayTimeout},
	} {
		t.Run(tt.name, func(t *testing.T) {
			g := guardWith(t, tt.upstream, proxy.Options{ResponseHeaderTimeout: 500 * time.Millisecond}, func(string, *slog.Logger) auth.Provider { return none.Provider{} })
			req, _ := http.NewRequest("GET", g.url+tt.path, nil)
			req.Header.Set("Accept", "text/html")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.want || !strings.Contains(string(body), `rel="stylesheet"`) {
				t.Fatalf("status %d, want %d with the styled page:\n%.300s", resp.StatusCode, tt.want, body)
			}
			if !strings.Contains(g.logs.String(), "level=ERROR") || !strings.Contains(g.logs.String(), "proxy: upstream request failed") {
				t.Errorf("no error line:\n%s", g.logs)
			}
		})
	}
}

// TestSmuggling sends, after an authenticated request framed with both
// Transfer-Encoding and Content-Length, a second request without
// credentials hidden where a server trusting Content-Length would see body:
// backupweb re-frames every request, so the hidden one is a request of its
// own, refused with 401, and the upstream sees only the first, without the
// other inside its body.
func TestSmuggling(t *testing.T) {
	up := startUpstream(t)
	g := guard(t, up.URL, basicSetup(t))
	before := up.hits.Load()
	conn, err := net.Dial("tcp", strings.TrimPrefix(g.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	smuggled := "GET /admin HTTP/1.1\r\nHost: a\r\n\r\n"
	fmt.Fprintf(conn, "POST /x HTTP/1.1\r\nHost: a\r\nAuthorization: Basic YXBpOnB3\r\nContent-Length: %d\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n%s", 5+len(smuggled), smuggled)
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	br := bufio.NewReader(conn)
	first, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got seen
	json.NewDecoder(first.Body).Decode(&got)
	first.Body.Close()
	if first.StatusCode == http.StatusOK && (got.Body != "" || got.Method != "POST") {
		t.Errorf("the upstream saw %s with body %q", got.Method, got.Body)
	}
	if first.StatusCode == http.StatusOK {
		second, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		second.Body.Close()
		if second.StatusCode != http.StatusUnauthorized {
			t.Errorf("the hidden request: %d, want 401", second.StatusCode)
		}
	} else if first.StatusCode != http.StatusBadRequest {
		t.Fatalf("first request: %d", first.StatusCode)
	}
	if n := up.hits.Load() - before; n > 1 {
		t.Fatalf("the upstream was hit %d times", n)
	}
}

// mustBasic returns the Basic provider of cfg, failing t if New refuses it.
func mustBasic(t testing.TB, cfg basic.Config, deps auth.Deps) *basic.Provider {
	t.Helper()
	p, err := basic.New(cfg, deps)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// carolOAuth returns the constructor of an oauth provider in front of a
// fresh OpenID Connect provider (oidctest) that knows carol (password pw,
// carol@example.com) and admits example.com; it sets *op, and *p when p
// is not nil, once the guard builds it.
func carolOAuth(t testing.TB, op **oidctest.Provider, p **oauth.Provider) func(base string, log *slog.Logger) auth.Provider {
	return func(base string, log *slog.Logger) auth.Provider {
		*op = oidctest.Start(t, oidctest.Options{
			Users:   []oidctest.User{{Username: "carol", Password: "pw", Email: "carol@example.com", EmailVerified: true}},
			Clients: []oidctest.Client{{ID: "proxy", Secret: "s", RedirectURIs: []string{base + oauth.CallbackPath}}},
		})
		prov, err := oauth.New(oauth.Config{Provider: "generic", Issuer: (*op).Issuer, ClientID: "proxy", ClientSecret: "s",
			RedirectURL: base + oauth.CallbackPath, Rule: oauth.Rule{Domains: []string{"example.com"}}},
			auth.Deps{Logger: log, SecretKey: []byte(strings.Repeat("k", 32)), StateDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { prov.Close() })
		if p != nil {
			*p = prov
		}
		return prov
	}
}

// signInCarol signs c in as carol through the guard at base and the
// OpenID provider op, and returns the last answer (its body unread).
func signInCarol(t testing.TB, c *http.Client, base string, op *oidctest.Provider) *http.Response {
	t.Helper()
	page, err := c.Get(base + oauth.LoginPath + "?next=/")
	if err != nil {
		t.Fatal(err)
	}
	resp, err := op.SubmitLogin(c, page, "carol", "pw")
	if err != nil {
		t.Fatal(err)
	}
	return resp
}
