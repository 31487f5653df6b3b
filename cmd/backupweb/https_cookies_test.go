package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/testkit"
	"github.com/backupweb/backupweb/internal/testkit/certtest"
	"github.com/backupweb/backupweb/internal/testkit/porttest"
)

// answered is what a recording transport saw of one answer.
type answered struct {
	what    string // method and path
	status  int
	cookies []string // the raw Set-Cookie lines
	hsts    string
}

// recorder is a RoundTripper that keeps every answer's Set-Cookie lines
// and Strict-Transport-Security header.
type recorder struct {
	next http.RoundTripper
	mu   sync.Mutex
	seen []answered
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := r.next.RoundTrip(req)
	if err == nil {
		r.mu.Lock()
		r.seen = append(r.seen, answered{req.Method + " " + req.URL.RequestURI(), resp.StatusCode,
			resp.Header.Values("Set-Cookie"), resp.Header.Get("Strict-Transport-Security")})
		r.mu.Unlock()
	}
	return resp, err
}

// since returns the answers seen from mark on, and the new mark.
func (r *recorder) since(mark int) ([]answered, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]answered(nil), r.seen[mark:]...), len(r.seen)
}

// setCookies returns, of answers, each cookie set (Max-Age > 0 or a
// session cookie) and each cleared, by wire name.
func setCookies(t *testing.T, answers []answered) (set, cleared map[string]bool) {
	t.Helper()
	set, cleared = map[string]bool{}, map[string]bool{}
	for _, a := range answers {
		for _, line := range a.cookies {
			c, err := http.ParseSetCookie(line)
			if err != nil {
				t.Fatalf("%s: Set-Cookie %q: %v", a.what, line, err)
			}
			if c.MaxAge < 0 {
				cleared[c.Name] = true
			} else {
				set[c.Name] = true
			}
		}
	}
	return set, cleared
}

// TestHTTPSCookiesEveryStep: served over HTTPS by itself, every answer of
// a sign-in with a second factor and of the sign-out carries HSTS, and
// every cookie it sets or clears (the CSRF form cookie, the pending
// second-factor state, the session and the device cookie) is Secure,
// HttpOnly, SameSite=Lax, Path=/, without Domain, and named __Host-.
func TestHTTPSCookiesEveryStep(t *testing.T) {
	ca := certtest.NewCA(t)
	dir := t.TempDir()
	certFile, keyFile := ca.Valid(t, "backups.lan").Write(t, dir)
	users := addUsers(t, dir, "alice")
	code, out, stderr := enrolPipe(t, users, "alice")
	if code != exitOK {
		t.Fatalf("user totp: %d %s", code, stderr)
	}
	u, _ := url.Parse(strings.TrimSpace(out))
	codes := &totpCodes{secret: u.Query().Get("secret"), used: map[int64]bool{}}
	port, err := porttest.Free()
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	conf := fmt.Sprintf("[server]\nlisten = %s\ntls_cert = %s\ntls_key = %s\nstate_dir = %s\naccess_log = false\n[backups]\ndir = %s\n[authentication]\ntype = flask-login\nuse_bcrypt = true\nusers_file = %s\nsecond_factor = required\n",
		addr, certFile, keyFile, filepath.Join(dir, "state"), dir, users)
	serveInProcess(t, dir, conf, map[string]string{"BACKUP_SECRET_KEY": testFactorSecret})
	base := fmt.Sprintf("https://backups.lan:%d", port)
	c := httpsClient(ca, addr)
	rec := &recorder{next: c.Transport}
	c.Transport = rec
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	mark := 0
	step := func(name string, wantSet, wantCleared []string) {
		t.Helper()
		var answers []answered
		answers, mark = rec.since(mark)
		set, cleared := setCookies(t, answers)
		for _, n := range wantSet {
			if !set[n] {
				t.Errorf("%s: %s was not set: %+v", name, n, answers)
			}
		}
		for _, n := range wantCleared {
			if !cleared[n] {
				t.Errorf("%s: %s was not cleared: %+v", name, n, answers)
			}
		}
	}

	// The password step: the form's cookie, then the pending state.
	resp := testkit.Post(t, c, testkit.Login{Page: base + "/login", User: "alice", Password: "pw-alice", Next: "/"})
	loc := resp.Header.Get("Location")
	if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, "/_backupweb/second-factor") {
		t.Fatalf("the password step: %d %q, want 303 to the second-factor step", resp.StatusCode, loc)
	}
	step("the password step", []string{"__Host-backupweb_csrf", "__Host-backupweb_pending"}, nil)

	// The second-factor step: the session and the device cookie; the
	// pending state is cleared.
	form := url.Values{"code": {codes.next(t)}, "next": {"/"}, "csrf_token": {testkit.Token(t, c, base+loc)}}
	resp, err = c.PostForm(base+"/_backupweb/second-factor", form)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("the second-factor step: %d, want 303", resp.StatusCode)
	}
	step("the second-factor step", []string{"__Host-backupweb_session", "__Host-backupweb_device"}, []string{"__Host-backupweb_pending"})
	if code, body := me(t, c, base); code != http.StatusOK || !strings.Contains(body, `"alice"`) {
		t.Fatalf("/api/me after the second factor: %d %s", code, body)
	}

	// The sign-out clears the session cookie.
	resp, err = c.PostForm(base+"/logout", url.Values{"csrf_token": {testkit.Token(t, c, base+"/")}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("logout: %d, want 303", resp.StatusCode)
	}
	step("the sign-out", nil, []string{"__Host-backupweb_session"})
	if code, _ := me(t, c, base); code != http.StatusUnauthorized {
		t.Errorf("/api/me after the sign-out: %d, want 401", code)
	}

	all, _ := rec.since(0)
	cookies := 0
	for _, a := range all {
		if a.hsts != "max-age=31536000" {
			t.Errorf("%s (%d): Strict-Transport-Security %q", a.what, a.status, a.hsts)
		}
		for _, line := range a.cookies {
			cookies++
			ck, _ := http.ParseSetCookie(line)
			attrs := strings.ToLower(line)
			if !strings.HasPrefix(ck.Name, "__Host-") || !ck.Secure || !ck.HttpOnly || ck.SameSite != http.SameSiteLaxMode ||
				ck.Path != "/" || ck.Domain != "" || strings.Contains(attrs, "domain=") {
				t.Errorf("%s: Set-Cookie %q: want __Host-, Secure, HttpOnly, SameSite=Lax, Path=/ and no Domain", a.what, line)
			}
		}
	}
	if cookies < 6 {
		t.Errorf("%d Set-Cookie lines in the whole journey; the steps above set and clear at least 6", cookies)
	}
}

// TestRedirectListenerAnswersOnly308: on redirect_http_listen, whatever
// the method, the path, the Host (another's, none at all, an HTTP/1.0
// request without one, an absolute request target) the answer is 308 to
// the same path and query at public_url, without a cookie and without
// HSTS (a browser ignores it on plain HTTP).
func TestRedirectListenerAnswersOnly308(t *testing.T) {
	ca := certtest.NewCA(t)
	dir := t.TempDir()
	certFile, keyFile := ca.Valid(t, "backups.lan").Write(t, dir)
	conf := fmt.Sprintf("[server]\nlisten = 127.0.0.1:0\nredirect_http_listen = 127.0.0.1:0\npublic_url = https://backups.lan\ntls_cert = %s\ntls_key = %s\naccess_log = false\n[backups]\ndir = %s\n", certFile, keyFile, dir)
	_, log := serveInProcess(t, dir, conf, nil)
	m := regexp.MustCompile(`redirecting plain HTTP to https" addr=(\S+)`).FindStringSubmatch(log.String())
	if m == nil {
		t.Fatalf("no redirect listener in the log:\n%s", log)
	}
	plain := m[1]
	const base = "https://backups.lan"
	tests := []struct {
		name, request, location string
	}{
		{"GET", "GET / HTTP/1.1\r\nHost: backups.lan\r\n\r\n", base + "/"},
		{"HEAD", "HEAD /healthz HTTP/1.1\r\nHost: backups.lan\r\n\r\n", base + "/healthz"},
		{"POST with a body", "POST /login HTTP/1.1\r\nHost: backups.lan\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 33\r\n\r\nusername=alice&password=pw-alice\n", base + "/login"},
		{"PUT", "PUT /backups/x.tar.gz HTTP/1.1\r\nHost: backups.lan\r\nContent-Length: 3\r\n\r\nabc", base + "/backups/x.tar.gz"},
		{"DELETE", "DELETE /api/tokens/1 HTTP/1.1\r\nHost: backups.lan\r\n\r\n", base + "/api/tokens/1"},
		{"PATCH", "PATCH /x HTTP/1.1\r\nHost: backups.lan\r\nContent-Length: 0\r\n\r\n", base + "/x"},
		{"OPTIONS", "OPTIONS /api/me HTTP/1.1\r\nHost: backups.lan\r\nOrigin: https://evil.example\r\n\r\n", base + "/api/me"},
		{"TRACE", "TRACE / HTTP/1.1\r\nHost: backups.lan\r\n\r\n", base + "/"},
		{"an unknown method", "PROPFIND /backups/ HTTP/1.1\r\nHost: backups.lan\r\nDepth: 1\r\n\r\n", base + "/backups/"},
		{"a query", "GET /backups/nightly.tar.gz?x=1&next=https://evil.example HTTP/1.1\r\nHost: backups.lan\r\n\r\n", base + "/backups/nightly.tar.gz?x=1&next=https://evil.example"},
		{"a path of two slashes", "GET //evil.example/x HTTP/1.1\r\nHost: backups.lan\r\n\r\n", base + "//evil.example/x"},
		{"dot segments", "GET /a/../login HTTP/1.1\r\nHost: backups.lan\r\n\r\n", base + "/a/../login"},
		{"an escaped path", "GET /a%2Fb/%2e%2e/c HTTP/1.1\r\nHost: backups.lan\r\n\r\n", base + "/a%2Fb/%2e%2e/c"},
		{"another's Host", "GET /login HTTP/1.1\r\nHost: evil.example\r\n\r\n", base + "/login"},
		{"a Host with a port", "GET /login HTTP/1.1\r\nHost: backups.lan:8080\r\n\r\n", base + "/login"},
		{"an empty Host", "GET /login HTTP/1.1\r\nHost:\r\n\r\n", base + "/login"},
		{"HTTP/1.0 without Host", "GET /login HTTP/1.0\r\n\r\n", base + "/login"},
		{"an absolute target", "GET http://evil.example/login HTTP/1.1\r\nHost: evil.example\r\n\r\n", base + "/login"},
		{"X-Forwarded headers", "GET /login HTTP/1.1\r\nHost: backups.lan\r\nX-Forwarded-Host: evil.example\r\nX-Forwarded-Proto: https\r\n\r\n", base + "/login"},
		{"a session cookie", "GET /api/me HTTP/1.1\r\nHost: backups.lan\r\nCookie: backupweb_session=AAAA; __Host-backupweb_session=AAAA\r\n\r\n", base + "/api/me"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conn, err := net.Dial("tcp", plain)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			conn.SetDeadline(time.Now().Add(30 * time.Second))
			if _, err := io.WriteString(conn, tt.request); err != nil {
				t.Fatal(err)
			}
			req, _ := http.ReadRequest(bufio.NewReader(strings.NewReader(tt.request)))
			resp, err := http.ReadResponse(bufio.NewReader(conn), req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusPermanentRedirect || resp.Header.Get("Location") != tt.location {
				t.Errorf("%d %q, want 308 %q", resp.StatusCode, resp.Header.Get("Location"), tt.location)
			}
			for _, h := range []string{"Set-Cookie", "Strict-Transport-Security", "Access-Control-Allow-Origin"} {
				if v := resp.Header.Get(h); v != "" {
					t.Errorf("%s: %q", h, v)
				}
			}
			if len(body) > 0 && string(body) != "This service is served over https: "+tt.location+"\n" {
				t.Errorf("the body says more than where to go: %q", body)
			}
		})
	}
	// The plain listener serves no page: a backup's bytes never go out.
	os.WriteFile(filepath.Join(dir, "nightly.tar.gz"), []byte("the backup's bytes"), 0o600)
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noFollow.Get("http://" + plain + "/backups/nightly.tar.gz")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusPermanentRedirect || strings.Contains(string(b), "the backup's bytes") {
		t.Errorf("a backup on the plain listener: %d %q", resp.StatusCode, b)
	}
}

// TestHTTPSOnAnIPAddress: a certificate for a LAN address alone makes
// public_url https://ADDRESS, which cannot be a passkey's relying-party
// id. With second factors off the service starts and signs in over https
// without passkeys; with them on, check-config refuses the address at
// second_factor, as for a public_url written so.
func TestHTTPSOnAnIPAddress(t *testing.T) {
	ca := certtest.NewCA(t)
	dir := t.TempDir()
	certFile, keyFile := ca.Valid(t, "127.0.0.1").Write(t, dir)
	users := addUsers(t, dir, "alice")
	port, err := porttest.Free()
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	conf := fmt.Sprintf("[server]\nlisten = %s\ntls_cert = %s\ntls_key = %s\nstate_dir = %s\naccess_log = false\n[backups]\ndir = %s\n[authentication]\ntype = flask-login\nuse_bcrypt = true\nusers_file = %s\n",
		addr, certFile, keyFile, filepath.Join(dir, "state"), dir, users)
	serveInProcess(t, dir, conf, nil)
	base := "https://" + addr
	c := httpsClient(ca, addr)
	login := testkit.SignIn(t, c, testkit.Login{Page: base + "/login", User: "alice", Password: "pw-alice"})
	if ck := login.Cookies(); len(ck) == 0 || ck[0].Name != "__Host-backupweb_session" {
		t.Errorf("the sign-in's cookies: %v", login.Header["Set-Cookie"])
	}
	if code, body := me(t, c, base); code != http.StatusOK || !strings.Contains(body, `"alice"`) {
		t.Errorf("/api/me: %d %s", code, body)
	}

	path := filepath.Join(dir, "second-factor.ini")
	must(t, os.WriteFile(path, []byte(strings.Replace(conf, "listen = "+addr, "listen = 127.0.0.1:0", 1)+"second_factor = optional\n"), 0o600))
	cli, _, errOut := testCLI(t.Context(), "", map[string]string{"BACKUP_SECRET_KEY": testFactorSecret})
	if code := cli.main([]string{"check-config", "-config", path}); code != exitError || !strings.Contains(errOut.String(), "second_factor") || !strings.Contains(errOut.String(), "relying-party id") {
		t.Errorf("check-config with second_factor = optional on an address: exit %d\n%s", code, errOut)
	}
}
