package proxy_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/auth/none"
	"github.com/backupweb/backupweb/internal/proxy"
	"github.com/backupweb/backupweb/internal/session"
)

// forgeries are request headers a client may write to pass as someone
// else: every spelling an upstream could read as an identity or forwarding
// header. The keys are written to the wire exactly as given.
var forgeries = map[string]string{
	"X_Forwarded_User":   "admin",
	"x_forwarded_user":   "root",
	"X-Forwarded_User":   "operator",
	"X_Forwarded_Email":  "admin@corp.example",
	"X-FORWARDED-EMAIL":  "boss@corp.example",
	"X-Forwarded-Groups": "admins",
	"X_Forwarded_Groups": "wheel",
	"X_Forwarded_For":    "10.6.6.6",
	"X_Forwarded_Proto":  "https",
	"X_Forwarded_Host":   "evil.example",
	"X-Forwarded-Uri":    "/admin",
	"X_Real_IP":          "10.6.6.6",
	"X-Real-Ip":          "10.6.6.7",
	"Forwarded":          "for=10.6.6.6;proto=https",
	// Other proxies' identity headers, which an application set up
	// behind one of them believes.
	"X-Auth-Request-User":   "admin",
	"X_Auth_Request_Groups": "admins",
	"x-auth-request-email":  "admin@corp.example",
	"Remote-User":           "admin",
	"REMOTE_GROUPS":         "admins",
	"Remote_Email":          "admin@corp.example",
	"Remote-Name":           "Admin",
	"X-Remote-User":         "admin",
	"x_remote_user":         "root",
}

// folded returns h's values under every spelling of name (case-folded,
// "_" read as "-"), as a WSGI server would join them.
func folded(h http.Header, name string) []string {
	want := strings.ReplaceAll(strings.ToLower(name), "_", "-")
	var vals []string
	for k, v := range h {
		if strings.ReplaceAll(strings.ToLower(k), "_", "-") == want {
			vals = append(vals, v...)
		}
	}
	return vals
}

// TestForgedHeaderSpellings: whatever spelling of an identity or
// forwarding header the client writes, the upstream sees only backupweb's
// values, for every type.
func TestForgedHeaderSpellings(t *testing.T) {
	up := startUpstream(t)
	for name, setup := range setups(t, up) {
		t.Run(name, func(t *testing.T) {
			s := setup()
			req, _ := http.NewRequest("GET", s.g.url+"/echo", nil)
			for k, v := range forgeries {
				req.Header[k] = []string{v}
			}
			if s.mod != nil {
				s.mod(req)
			}
			resp, err := s.client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			var got seen
			json.NewDecoder(resp.Body).Decode(&got)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d", resp.StatusCode)
			}
			want := map[string][]string{
				"X-Forwarded-User":      nil,
				"X-Forwarded-Email":     nil,
				"X-Forwarded-Groups":    nil,
				"X-Forwarded-Uri":       nil,
				"X-Real-IP":             nil,
				"Forwarded":             nil,
				"X-Auth-Request-User":   nil,
				"X-Auth-Request-Groups": nil,
				"X-Auth-Request-Email":  nil,
				"Remote-User":           nil,
				"Remote-Groups":         nil,
				"Remote-Email":          nil,
				"Remote-Name":           nil,
				"X-Remote-User":         nil,
				"X-Forwarded-For":       {"127.0.0.1"},
				"X-Forwarded-Proto":     {"http"},
				"X-Forwarded-Host":      {strings.TrimPrefix(s.g.url, "http://")},
			}
			if s.user != "" {
				want["X-Forwarded-User"] = []string{s.user}
			}
			if s.email != "" {
				want["X-Forwarded-Email"] = []string{s.email}
			}
			for h, w := range want {
				if g := folded(got.Header, h); fmt.Sprint(g) != fmt.Sprint(w) {
					t.Errorf("the upstream saw %s = %q, want %q (all headers: %v)", h, g, w, got.Header)
				}
			}
		})
	}
}

// TestCustomIdentityHeaderSpellings: a configured user_header other than
// the default is protected the same way.
func TestCustomIdentityHeaderSpellings(t *testing.T) {
	var got http.Header
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got = r.Header.Clone() }))
	t.Cleanup(up.Close)
	target, _ := url.Parse(up.URL)
	h := proxy.New(proxy.Options{Upstream: target, UserHeader: "Remote-User"})
	req := httptest.NewRequest("GET", "/x", nil)
	req.Header["Remote_User"] = []string{"admin"}
	req.Header["REMOTE-USER"] = []string{"admin"}
	req.Header["Remote_Usr"] = []string{"kept"} // not a spelling of it
	h.ServeHTTP(httptest.NewRecorder(), req)
	if v := folded(got, "Remote-User"); len(v) != 0 {
		t.Errorf("the upstream saw Remote-User %q from the client", v)
	}
	if got.Get("Remote_Usr") != "kept" {
		t.Errorf("an unrelated header was removed: %v", got)
	}
}

// TestUpstreamCannotSetOurCookies: a proxied answer's Set-Cookie naming
// one of backupweb's cookies, under any prefix, never reaches the browser;
// the application's own cookies do; one warning per upstream.
func TestUpstreamCannotSetOurCookies(t *testing.T) {
	ours := []string{
		session.DefaultCookieName, session.DefaultFormCookieName, "backupweb_oauth_0123456789", "backupweb_device",
		session.HostPrefix + session.DefaultCookieName, session.SecurePrefix + session.DefaultCookieName,
		session.HostPrefix + session.DefaultFormCookieName, session.SecurePrefix + "backupweb_oauth_x",
		"__host-" + session.DefaultCookieName, "__SECURE-" + session.DefaultCookieName,
	}
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for _, name := range ours {
			w.Header().Add("Set-Cookie", name+"=fixed-by-upstream; Path=/; HttpOnly")
		}
		w.Header().Add("Set-Cookie", "app=1; Path=/")
		w.Header().Add("Set-Cookie", " backupweb_session =spaced; Path=/")
		w.Header().Add("Set-Cookie", "backupweb_session") // no value: a clearing attempt
		io.WriteString(w, "page")
	}))
	t.Cleanup(up.Close)
	g := guard(t, up.URL, func(string, *slog.Logger) auth.Provider { return none.Provider{} })
	for range 3 {
		resp, err := http.Get(g.url + "/page")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if got := resp.Header.Values("Set-Cookie"); len(got) != 1 || got[0] != "app=1; Path=/" || string(body) != "page" {
			t.Fatalf("the browser got Set-Cookie %q body %q, want only the application's own", got, body)
		}
	}
	logged := g.logs.String()
	if n := strings.Count(logged, "the upstream tried to set backupweb's own cookies"); n != 1 {
		t.Errorf("%d warnings about the upstream's cookies, want 1:\n%s", n, logged)
	}
	if !strings.Contains(logged, "level=WARN") || !strings.Contains(logged, "upstream="+up.URL) || strings.Contains(logged, "fixed-by-upstream") {
		t.Errorf("the warning must name the upstream and the cookies, never their values:\n%s", logged)
	}
}

// TestH2CNeverReachesTheUpstream: a cleartext HTTP/2 upgrade is not passed
// on (the upstream must not switch a connection whose later requests
// backupweb would not see), with or without HTTP2-Settings named in
// Connection; a WebSocket upgrade still works.
func TestH2CNeverReachesTheUpstream(t *testing.T) {
	up := startUpstream(t)
	g := guard(t, up.URL, func(string, *slog.Logger) auth.Provider { return none.Provider{} })
	host := strings.TrimPrefix(g.url, "http://")
	for _, conn := range []string{"Upgrade, HTTP2-Settings", "Upgrade"} {
		for _, upgrade := range []string{"h2c", "H2C", "websocket, h2c"} {
			c, err := net.Dial("tcp", host)
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(c, "GET /echo HTTP/1.1\r\nHost: %s\r\nConnection: %s\r\nUpgrade: %s\r\nHTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\nHttp2_Settings: AAMAAABk\r\n\r\n", host, conn, upgrade)
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				t.Fatal(err)
			}
			var got seen
			json.NewDecoder(resp.Body).Decode(&got)
			resp.Body.Close()
			c.Close()
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("Connection %q Upgrade %q: status %d", conn, upgrade, resp.StatusCode)
			}
			if v := folded(got.Header, "Upgrade"); len(v) != 0 {
				t.Errorf("Connection %q Upgrade %q: the upstream saw Upgrade %q", conn, upgrade, v)
			}
			if v := folded(got.Header, "HTTP2-Settings"); len(v) != 0 {
				t.Errorf("Connection %q Upgrade %q: the upstream saw HTTP2-Settings %q", conn, upgrade, v)
			}
		}
	}

	upgradeEcho(t, g.url, nil)
}
