package main

import (
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/backupweb/backupweb/internal/testkit"
	"github.com/backupweb/backupweb/internal/testkit/browsertest"
	"github.com/backupweb/backupweb/internal/testkit/logtest"
	"github.com/backupweb/backupweb/internal/testkit/toolstest"
)

// guardingDoc is the page whose configurations the tests run as written.
const guardingDoc = "docs/guarding.md"

// docSnippet returns the fenced block of the given language that follows
// marker in the documentation page doc (a path from the module root): the
// tests run exactly the configurations the documentation gives.
func docSnippet(t *testing.T, doc, marker, lang string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", filepath.FromSlash(doc)))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i := strings.Index(s, marker)
	if i < 0 {
		t.Fatalf("%s has no %q", doc, marker)
	}
	s = s[i:]
	start := strings.Index(s, "```"+lang+"\n")
	if start < 0 {
		t.Fatalf("%s has no %s block after %q", doc, lang, marker)
	}
	s = s[start+len("```"+lang+"\n"):]
	return s[:strings.Index(s, "```")]
}

// asWSGIReads returns the value a WSGI application reads for the header
// name: every spelling of it (case-folded, "_" read as "-") joined with
// commas, as gunicorn builds HTTP_X_FORWARDED_USER.
func asWSGIReads(h http.Header, name string) string {
	want := strings.ReplaceAll(strings.ToLower(name), "_", "-")
	var vals []string
	for k, v := range h {
		if strings.ReplaceAll(strings.ToLower(k), "_", "-") == want {
			vals = append(vals, v...)
		}
	}
	sort.Strings(vals)
	return strings.Join(vals, ",")
}

// forgedIdentity are the identity headers a signed-in client adds to pass
// as someone else, in the spellings an upstream may read.
var forgedIdentity = map[string]string{
	"X-Forwarded-User":     "mallory",
	"X_Forwarded_User":     "mallory",
	"x_forwarded_user":     "mallory",
	"X-Forwarded-Email":    "mallory@evil.example",
	"X_Forwarded_Email":    "mallory@evil.example",
	"X-Auth-Request-User":  "mallory",
	"X-Auth-Request-Email": "mallory@evil.example",
	"X_Auth_Request_Email": "mallory@evil.example",
}

// guardedSetup runs the guarded interface (an echo of what it got, as an
// HTML page) and backupweb (flask-login, alice/alice-pw, trusting
// 127.0.0.1) with the documentation's forward-auth configuration.
func guardedSetup(t *testing.T) (backupweb, upstream string) {
	t.Helper()
	return guardedWith(t, "")
}

// guardedWith is guardedSetup with the documentation's [authentication] section
// replaced by authSection ("" keeps it).
func guardedWith(t *testing.T, authSection string) (backupweb, upstream string) {
	t.Helper()
	up := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, "<!doctype html><title>Guarded</title><h1 id=guarded>Guarded interface</h1><p id=user>%s</p><p id=email>%s</p><p id=path>%s</p><p id=cookie>%s</p>",
			html.EscapeString(asWSGIReads(r.Header, "X-Forwarded-User")), html.EscapeString(asWSGIReads(r.Header, "X-Forwarded-Email")), r.URL.RequestURI(), html.EscapeString(strings.Join(r.Header.Values("Cookie"), " | ")))
	})}
	uln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go up.Serve(uln)
	t.Cleanup(func() { up.Close() })

	addr, stderr := serveGuardingDoc(t, "backupweb's configuration for all three", func(ini, _ string) string {
		if authSection != "" {
			ini = ini[:strings.Index(ini, "[authentication]")] + authSection
		}
		return ini
	})
	// Forward-auth only: no catalog, and no word about a backups folder.
	if strings.Contains(stderr.String(), "backups") {
		t.Errorf("a forward-auth instance spoke of backups:\n%s", stderr)
	}
	for _, path := range []string{"/", "/api/backups", "/api/me"} {
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("forward-auth instance: %s answered %d, want 404 (no catalog)", path, resp.StatusCode)
		}
	}
	return addr, uln.Addr().String()
}

// serveGuardingDoc is serveInProcess for the configuration of
// docs/guarding.md in the ini block after marker, with the test's listen
// address and state folder, and alice (password alice-pw) in its user
// file; edit, when not nil, changes it first (dir: the test's folder).
func serveGuardingDoc(t *testing.T, marker string, edit func(ini, dir string) string) (addr string, log *logtest.Buffer) {
	t.Helper()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "users"), []byte("alice:"+testkit.Hash(t, "alice-pw")+"\n"), 0o600)
	ini := strings.NewReplacer("listen = 127.0.0.1:8080", "listen = 127.0.0.1:0\nstate_dir = "+filepath.Join(dir, "state"),
		"/etc/backupweb/users", filepath.Join(dir, "users")).Replace(docSnippet(t, guardingDoc, marker, "ini"))
	if edit != nil {
		ini = edit(ini, dir)
	}
	return serveInProcess(t, dir, ini, nil)
}

// place puts the real addresses into a documented configuration.
func place(conf, backupweb, upstream, listen string) string {
	return strings.NewReplacer("127.0.0.1:8080", backupweb, "127.0.0.1:5000", upstream, "127.0.0.1:8443", listen).Replace(conf)
}

// startNginx runs nginx with the documentation's configuration on listen.
func startNginx(t *testing.T, listen, backupweb, upstream string) string {
	t.Helper()
	runNginx(t, listen, place(docSnippet(t, guardingDoc, "**nginx**", "nginx"), backupweb, upstream, listen))
	return "http://" + listen
}

// runNginx runs nginx in the foreground, in a folder of the test's, with
// server (the http block's server, listening on listen), until the test
// ends.
func runNginx(t *testing.T, listen, server string) {
	t.Helper()
	nginx := toolstest.Need(t, "nginx", "nginx-light")
	dir := t.TempDir()
	conf := fmt.Sprintf(`daemon off;
master_process off;
pid %[1]s/nginx.pid;
error_log %[1]s/error.log;
events {}
http {
    access_log off;
    client_body_temp_path %[1]s/body;
    proxy_temp_path %[1]s/proxy;
    fastcgi_temp_path %[1]s/fastcgi;
    uwsgi_temp_path %[1]s/uwsgi;
    scgi_temp_path %[1]s/scgi;
%[2]s
}
`, dir, server)
	os.WriteFile(filepath.Join(dir, "nginx.conf"), []byte(conf), 0o600)
	cmd := exec.Command(nginx, "-p", dir, "-c", filepath.Join(dir, "nginx.conf"))
	testkit.StartServer(t, cmd, listen, 15*time.Second, func() string { b, _ := os.ReadFile(filepath.Join(dir, "error.log")); return string(b) })
}

// startCaddy runs Caddy with the documentation's configuration on listen.
func startCaddy(t *testing.T, listen, backupweb, upstream string) string {
	t.Helper()
	caddy := toolstest.Need(t, "caddy", "caddy")
	dir := t.TempDir()
	site := place(docSnippet(t, guardingDoc, "**Caddy**", "caddy"), backupweb, upstream, listen)
	conf := "{\n\tadmin off\n\tauto_https off\n}\n" + site
	os.WriteFile(filepath.Join(dir, "Caddyfile"), []byte(conf), 0o600)
	cmd := exec.Command(caddy, "run", "--config", filepath.Join(dir, "Caddyfile"), "--adapter", "caddyfile")
	cmd.Env = append(os.Environ(), "HOME="+dir, "XDG_DATA_HOME="+dir, "XDG_CONFIG_HOME="+dir)
	testkit.StartServer(t, cmd, listen, 15*time.Second, nil)
	return "http://" + listen
}

// throughProxy signs in through front (nginx or Caddy in front of
// backupweb and the guarded interface) as a browser would, and checks each
// step of the forward-authentication dance.
//
// With strictCookies (nginx and Caddy, whose documented snippets strip them) it then
// checks that the application never gets backupweb's cookies, and that
// paths merely starting like backupweb's (/login.html, /logout-all) are
// the application's.
func throughProxy(t *testing.T, front string, strictCookies bool) {
	c := testkit.Client()
	c.Timeout = 10 * time.Second
	get := func(path, accept string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest("GET", front+path, nil)
		if accept != "" {
			req.Header.Set("Accept", accept)
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	// An API client without a session: 401, JSON, nothing from upstream.
	resp := get("/app/page?x=1&y=2", "application/json")
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || strings.Contains(string(body), "Guarded interface") {
		t.Fatalf("API client without a session: %d %s", resp.StatusCode, body)
	}
	// A browser: sent to the login page with next.
	resp = get("/app/page?x=1&y=2", "text/html")
	resp.Body.Close()
	loc := resp.Header.Get("Location")
	if (resp.StatusCode != http.StatusFound && resp.StatusCode != http.StatusSeeOther) || loc != "/login?next=%2Fapp%2Fpage%3Fx%3D1%26y%3D2" {
		t.Fatalf("browser without a session: %d Location %q", resp.StatusCode, loc)
	}
	resp = testkit.SignIn(t, c, testkit.Login{Page: front + loc, User: "alice", Password: "alice-pw", Next: "/app/page?x=1&y=2"})
	if resp.Header.Get("Location") != "/app/page?x=1&y=2" {
		t.Fatalf("login: %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	forged, _ := http.NewRequest("GET", front+"/app/page?x=1&y=2", nil)
	forged.Header.Set("Accept", "text/html")
	for k, v := range forgedIdentity {
		forged.Header[k] = []string{v}
	}
	resp, err := c.Do(forged)
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	// alice has no e-mail: the guarded interface must see none, neither
	// the client's nor a placeholder's text.
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "<p id=user>alice</p><p id=email></p>") || !strings.Contains(string(body), "/app/page?x=1&amp;y=2") && !strings.Contains(string(body), "/app/page?x=1&y=2") {
		t.Fatalf("signed in: %d\n%s", resp.StatusCode, body)
	}
	if !strictCookies {
		return
	}
	// The application gets the browser's cookies, never backupweb's, in
	// any position and with any prefix.
	u, _ := url.Parse(front)
	for _, ck := range []*http.Cookie{{Name: "theme", Value: "dark"}, {Name: "backupweb_oauth_abc", Value: "flow"},
		{Name: "__Host-backupweb_csrf", Value: "x"}, {Name: "lang", Value: "en"}, {Name: "xbackupweb_session", Value: "app"}} {
		c.Jar.SetCookies(u, []*http.Cookie{ck})
	}
	for _, path := range []string{"/app/page", "/login.html", "/logout-all", "/loginx", "/_backupwebx"} {
		resp := get(path, "text/html")
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		m := regexp.MustCompile(`<p id=cookie>([^<]*)</p>`).FindSubmatch(body)
		if resp.StatusCode != http.StatusOK || m == nil {
			t.Fatalf("%s: %d, want the application's page\n%.300s", path, resp.StatusCode, body)
		}
		if path == "/app/page" {
			t.Logf("the browser sent %d cookies; the application got %q", len(c.Jar.Cookies(u)), m[1])
		}
		for c := range strings.SplitSeq(html.UnescapeString(string(m[1])), "; ") {
			name, _, _ := strings.Cut(c, "=")
			if strings.HasPrefix(strings.TrimPrefix(strings.TrimPrefix(name, "__Host-"), "__Secure-"), "backupweb_") || c == "" {
				t.Errorf("%s: the application got the cookies %q", path, m[1])
			}
		}
		for _, want := range []string{"theme=dark", "lang=en", "xbackupweb_session=app"} {
			if !strings.Contains(string(m[1]), want) {
				t.Errorf("%s: the application's cookie %s was lost: %q", path, want, m[1])
			}
		}
	}
}

func TestGuardWithNginx(t *testing.T) {
	backupweb, upstream := guardedSetup(t)
	throughProxy(t, startNginx(t, testkit.FreeAddr(t), backupweb, upstream), true)
}

func TestGuardWithCaddy(t *testing.T) {
	backupweb, upstream := guardedSetup(t)
	throughProxy(t, startCaddy(t, testkit.FreeAddr(t), backupweb, upstream), true)
}

// TestBrowserThroughNginx: a browser asks nginx for a page of the guarded
// interface, lands on backupweb's login form, signs in and sees the page.
func TestBrowserThroughNginx(t *testing.T) {
	backupweb, upstream := guardedSetup(t)
	front := startNginx(t, testkit.FreeAddr(t), backupweb, upstream)
	ctx := browsertest.New(t)
	if err := chromedp.Do(ctx,
		chromedp.Navigate(front+"/app/page?x=1"),
		browsertest.SignIn("alice", "alice-pw"),
		chromedp.WaitVisible(chromedp.CSS("#guarded")),
	); err != nil {
		t.Fatal(err)
	}
	user, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#user")))
	if err != nil || user != "alice" {
		t.Fatalf("the guarded page saw user %q (%v)", user, err)
	}
	path, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#path")))
	if err != nil || path != "/app/page?x=1" {
		t.Fatalf("landed on %q (%v), want the page asked for", path, err)
	}
}

// TestReadmeProxyConfiguration serves the documentation's built-in proxy
// configuration in front of a real upstream: a browser is sent to the
// login page, a signed-in one reaches the upstream as alice.
func TestReadmeProxyConfiguration(t *testing.T) {
	_, upstream := guardedSetup(t)
	throughProxy(t, startProxyMode(t, upstream, ""), false)
}
