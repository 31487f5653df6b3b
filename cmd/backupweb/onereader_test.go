package main

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/testkit"
)

// overrideSpelling is one way a client names DELETE on a GET: a header
// (name and value) or a query.
type overrideSpelling struct {
	header, query string
}

// overrideSpellings are the method-override spellings an application may
// honour (docs/tokens.md, "What counts as a method override").
var overrideSpellings = []overrideSpelling{
	{header: "X-HTTP-Method-Override"},
	{header: "X-HTTP-Method"},
	{header: "X-Method-Override"},
	{header: "x-http-method-override"},
	{header: "X_HTTP_Method_Override"},
	{header: "X_Method_Override"},
	{header: "x_http_method"},
	{query: "_method=DELETE"},
	{query: "a=1&_method=DELETE"},
	{query: "a=1;_method=DELETE"},
	{query: "_Method=DELETE"},
	{query: "_METHOD=delete"},
	{query: "%5Fmethod=DELETE"},
	{query: "_method=GET&_method=DELETE"},
}

func (s overrideSpelling) String() string {
	if s.header != "" {
		return s.header
	}
	return "?" + s.query
}

// overrideHeaderSeen reports whether h holds a method-override header in
// any spelling.
func overrideHeaderSeen(h http.Header) bool {
	for name := range h {
		switch strings.ReplaceAll(strings.ToLower(name), "_", "-") {
		case "x-http-method-override", "x-http-method", "x-method-override":
			return true
		}
	}
	return false
}

// oneReaderRules: DELETE under /app/ is denied for everyone; /data/ is
// not named, so that a read-only token's refusal there is its scope's.
const oneReaderRules = "rule1 = DELETE ^/app/ deny\n"

// spellingRequest is a token's GET of front+path in spelling s, for host.
func spellingRequest(t *testing.T, front, path, host, token string, s overrideSpelling) *http.Request {
	t.Helper()
	target := front + path
	if s.query != "" {
		target += "?" + s.query
	}
	req, err := http.NewRequest("GET", target, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = host
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Accept", "application/json")
	if s.header != "" {
		req.Header[s.header] = []string{"DELETE"}
	}
	return req
}

// checkSpellings sends every spelling by the read-only token (to /data/x)
// and the path-scoped token (to /app/x, where DELETE is denied): each is
// refused, or (a header the proxy drops, as nginx drops underscored names)
// reaches the application without any override header.
func checkSpellings(t *testing.T, front, host, ro, scoped string, app *recordingApp) {
	t.Helper()
	client := &http.Client{Timeout: 10 * time.Second}
	for _, c := range []struct{ who, token, path string }{{"read-only", ro, "/data/x"}, {"path-scoped", scoped, "/app/x"}} {
		resp, err := client.Do(spellingRequest(t, front, c.path, host, c.token, overrideSpelling{}))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("%s token, plain GET %s: %d, want 200", c.who, c.path, resp.StatusCode)
		}
		for _, s := range overrideSpellings {
			_, before := app.last(c.path)
			resp, err := client.Do(spellingRequest(t, front, c.path, host, c.token, s))
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			h, after := app.last(c.path)
			switch {
			case resp.StatusCode == http.StatusForbidden && after == before:
			case resp.StatusCode == http.StatusOK && after == before+1 && s.header != "" && !overrideHeaderSeen(h):
				// The proxy dropped the header: the application serves a GET.
			default:
				t.Errorf("%s token, %s: %d, the application asked %d times (headers %v), want 403 and never", c.who, s, resp.StatusCode, after-before, h)
			}
		}
	}
}

// hostForm is a request line and Host header written by hand.
type hostForm struct{ name, head string }

// rawAnswer sends head (a request line and headers) to addr and returns
// the status.
func rawAnswer(t *testing.T, addr, head string) int {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, head+"Accept: application/json\r\nConnection: close\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("%q: %v", head, err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// otherHosts are Host forms for a host that no rule names, each with the
// read-only token's credentials and a path the application serves.
func otherHosts(token string) []hostForm {
	auth := "Authorization: Bearer " + token + "\r\n"
	return []hostForm{
		{"another name", "GET /data/x HTTP/1.1\r\nHost: other.example.com\r\n" + auth},
		{"an address", "GET /data/x HTTP/1.1\r\nHost: 127.0.0.1\r\n" + auth},
		{"an address with port", "GET /data/x HTTP/1.1\r\nHost: 127.0.0.1:9\r\n" + auth},
		{"a look-alike suffix", "GET /data/x HTTP/1.1\r\nHost: app.example.com.evil.net\r\n" + auth},
		{"a sub-domain", "GET /data/x HTTP/1.1\r\nHost: www.app.example.com\r\n" + auth},
		{"an absolute target", "GET http://other.example.com/data/x HTTP/1.1\r\nHost: app.example.com\r\n" + auth},
	}
}

// sameHosts are spellings of app.example.com itself, served.
func sameHosts(token string) []hostForm {
	auth := "Authorization: Bearer " + token + "\r\n"
	return []hostForm{
		{"upper case", "GET /data/x HTTP/1.1\r\nHost: APP.Example.COM\r\n" + auth},
		{"a port", "GET /data/x HTTP/1.1\r\nHost: app.example.com:8443\r\n" + auth},
		{"a final dot", "GET /data/x HTTP/1.1\r\nHost: app.example.com.\r\n" + auth},
	}
}

// TestOneReaderThroughNginx runs the nginx snippet of docs/guarding.md as
// written in front of backupweb's forward-auth configuration (with
// default = deny and every path allowed on app.example.com only) and a
// recording application: every method-override spelling, sent by a
// read-only and a path-scoped machine token, is refused (or the spelling
// never passes nginx), and every Host form for another host is refused by
// the default.
func TestOneReaderThroughNginx(t *testing.T) {
	app := &recordingApp{seen: map[string][]http.Header{}}
	up := &http.Server{Handler: app}
	uln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go up.Serve(uln)
	t.Cleanup(func() { up.Close() })
	var ro, scoped string
	backupweb, _ := serveGuardingDoc(t, "backupweb's configuration for all three", func(ini, dir string) string {
		ro = newToken(t, dir, "alice", "-read-only")
		scoped = newToken(t, dir, "alice", "-path", "/app/")
		return ini + "\n[access]\ndefault = deny\n" + oneReaderRules + "rule2 = * ^/ allow\nrule2.hosts = app.example.com\n"
	})
	listen := testkit.FreeAddr(t)
	front := startNginx(t, listen, backupweb, uln.Addr().String())
	checkSpellings(t, front, "app.example.com", ro, scoped, app)
	for _, f := range sameHosts(ro) {
		if code := rawAnswer(t, listen, f.head); code != 200 {
			t.Errorf("through nginx, Host %s: %d, want 200", f.name, code)
		}
	}
	for _, f := range otherHosts(ro) {
		_, before := app.last("/data/x")
		code := rawAnswer(t, listen, f.head)
		// nginx's error page asks /auth/forward again with the Host
		// header, where auth_request named the absolute target's host: a
		// redirect back then, still never the application.
		if _, after := app.last("/data/x"); code != http.StatusForbidden && (f.name != "an absolute target" || code != http.StatusSeeOther) || after != before {
			t.Errorf("through nginx, Host %s: %d, the application asked %d times; want 403 (default = deny) and never", f.name, code, after-before)
		}
	}
}

// TestOneReaderThroughProxy is the same through the built-in proxy: a
// rule limited to app.example.com makes every other Host form 421, the
// application never asked.
func TestOneReaderThroughProxy(t *testing.T) {
	dir := tokenSetup(t)
	ro := newToken(t, dir, "alice", "-read-only")
	scoped := newToken(t, dir, "alice", "-path", "/app/")
	app := &recordingApp{seen: map[string][]http.Header{}}
	up := &http.Server{Handler: app}
	uln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go up.Serve(uln)
	t.Cleanup(func() { up.Close() })
	ini := strings.Replace(loginINI(dir, "[proxy]\nupstream = http://"+uln.Addr().String()+"\n\n[access]\n"+oneReaderRules+
		"rule2 = * ^/admin/ deny\nrule2.hosts = app.example.com\n"), "[backups]\ndir = "+dir+"/backups\n", "", 1)
	addr, log := serveInProcess(t, t.TempDir(), ini, nil)
	checkSpellings(t, "http://"+addr, "app.example.com", ro, scoped, app)
	for _, f := range sameHosts(ro) {
		if code := rawAnswer(t, addr, f.head); code != 200 {
			t.Errorf("through the proxy, Host %s: %d, want 200", f.name, code)
		}
	}
	for _, f := range append(otherHosts(ro), hostForm{"no Host (HTTP/1.0)", "GET /data/x HTTP/1.0\r\nAuthorization: Bearer " + ro + "\r\n"}) {
		_, before := app.last("/data/x")
		code := rawAnswer(t, addr, f.head)
		if _, after := app.last("/data/x"); code != http.StatusMisdirectedRequest || after != before {
			t.Errorf("through the proxy, Host %s: %d, the application asked %d times; want 421 and never", f.name, code, after-before)
		}
	}
	if code := rawAnswer(t, addr, "GET /healthz HTTP/1.1\r\nHost: other.example.com\r\n"); code != 200 {
		t.Errorf("/healthz for another host: %d, want 200", code)
	}
	if !strings.Contains(log.String(), `reason="host not served"`) {
		t.Errorf("no refusal line for a host not served:\n%s", log.String())
	}
}
