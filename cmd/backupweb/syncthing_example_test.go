package main

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/testkit"
)

// syncthingThrough checks Syncthing's GUI through front as a browser
// uses it: refused without a session, then signed in, the GUI page, its
// REST API with Syncthing's own CSRF cookie and header (backupweb's
// cookies removed, the application's kept), and after sign-out refused
// again.
func syncthingThrough(t *testing.T, front string) {
	t.Helper()
	c := testkit.Client()
	c.Timeout = 20 * time.Second
	get := func(path string, h map[string]string) (int, string, http.Header) {
		t.Helper()
		req, _ := http.NewRequest("GET", front+path, nil)
		for k, v := range h {
			req.Header.Set(k, v)
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode, string(b), resp.Header
	}
	html := map[string]string{"Accept": "text/html"}
	if code, _, h := get("/", html); code != http.StatusSeeOther && code != http.StatusFound || !strings.Contains(h.Get("Location"), "/login?next=%2F") {
		t.Fatalf("Syncthing without a session: %d %q, want the login page", code, h.Get("Location"))
	}
	code, page, _ := get("/login?next=%2F", html)
	tok := testkit.FormToken([]byte(page))
	if code != http.StatusOK || tok == "" || !strings.Contains(page, "Sign in · Syncthing") {
		t.Fatalf("login page: %d\n%s", code, page)
	}
	resp, err := c.PostForm(front+"/login", url.Values{"username": {"alice"}, "password": {"alice-pw"}, "csrf_token": {tok}, "next": {"/"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("login: %d", resp.StatusCode)
	}
	code, page, _ = get("/", html)
	if code != http.StatusOK || !strings.Contains(page, "Syncthing") || strings.Contains(page, "Host check error") {
		t.Fatalf("Syncthing's GUI through %s: %d %.300s", front, code, page)
	}
	// Syncthing's own CSRF protection: a cookie CSRF-Token-<id> set with
	// the page, echoed in the header X-CSRF-Token-<id>.
	u, _ := url.Parse(front)
	var name, value string
	for _, ck := range c.Jar.Cookies(u) {
		if strings.HasPrefix(ck.Name, "CSRF-Token-") {
			name, value = ck.Name, ck.Value
		}
	}
	if name == "" {
		t.Fatal("Syncthing's CSRF cookie did not reach the browser")
	}
	code, body, _ := get("/rest/system/version", map[string]string{"X-" + name: value, "Sec-Fetch-Mode": "cors"})
	if code != http.StatusOK || !strings.Contains(body, `"version"`) {
		t.Fatalf("Syncthing's REST API through %s: %d %s", front, code, body)
	}
	// Sign out as the page's form does.
	code, page, _ = get("/logout", html)
	tok = testkit.FormToken([]byte(page))
	if code != http.StatusOK || tok == "" || !strings.Contains(page, "Back to Syncthing") {
		t.Fatalf("sign-out page: %d\n%s", code, page)
	}
	if strings.Contains(page, "icon.svg") {
		t.Errorf("the sign-out page in front of Syncthing shows backupweb's icon:\n%s", page)
	}
	resp, err = c.PostForm(front+"/logout", url.Values{"csrf_token": {tok}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign-out: %d", resp.StatusCode)
	}
	if code, _, _ := get("/rest/system/version", map[string]string{"X-" + name: value}); code != http.StatusUnauthorized {
		t.Fatalf("Syncthing's API after signing out: %d, want 401", code)
	}
}

// TestSyncthingThroughProxy is the documentation's worked example with the
// built-in proxy, against a real Syncthing: the default pass_host_header
// (off) sends Syncthing its own address, which its host check accepts.
func TestSyncthingThroughProxy(t *testing.T) {
	st := startSyncthing(t, false)
	syncthingThrough(t, startProxyMode(t, st, "[ui]\nproduct_name = Syncthing\n"))
}

// TestSyncthingThroughNginx is the documentation's worked example with nginx's
// auth_request, against a real Syncthing.
func TestSyncthingThroughNginx(t *testing.T) {
	st := startSyncthing(t, false)
	backupweb := startForwardAuth(t, "[ui]\nproduct_name = Syncthing\n")
	syncthingThrough(t, startNginx(t, testkit.FreeAddr(t), backupweb, st))
}

// startForwardAuth serves the documentation's forward-authentication
// configuration (flask-login, alice/alice-pw, trusting 127.0.0.1) with
// extra appended, and returns its address.
func startForwardAuth(t *testing.T, extra string) string {
	t.Helper()
	addr, _ := serveGuardingDoc(t, "backupweb's configuration for all three", func(ini, dir string) string {
		return ini + "\n[backups]\ndir = " + dir + "\n" + extra
	})
	return addr
}
