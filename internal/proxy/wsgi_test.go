package proxy_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/testkit"
	"github.com/backupweb/backupweb/internal/testkit/toolstest"
)

// wsgiApp answers with the CGI-style variables a Python application reads
// its identity from, as its WSGI server built them.
const wsgiApp = `import json

KEYS = ["HTTP_X_FORWARDED_USER", "HTTP_X_FORWARDED_EMAIL", "HTTP_X_FORWARDED_GROUPS",
        "HTTP_X_FORWARDED_FOR", "HTTP_X_FORWARDED_PROTO", "HTTP_X_FORWARDED_HOST",
        "HTTP_X_REAL_IP", "HTTP_FORWARDED", "HTTP_UPGRADE", "HTTP_HTTP2_SETTINGS"]

def application(environ, start_response):
    body = json.dumps({k: environ[k] for k in KEYS if k in environ}).encode()
    start_response("200 OK", [("Content-Type", "application/json"), ("Content-Length", str(len(body)))])
    return [body]
`

// startGunicorn serves wsgiApp with gunicorn (Debian's package) on a free
// loopback port, and stops it when the test ends.
func startGunicorn(t *testing.T) string {
	t.Helper()
	gunicorn := toolstest.Need(t, "gunicorn", "gunicorn")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "identityapp.py"), []byte(wsgiApp), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := testkit.FreeAddr(t)
	cmd := exec.Command(gunicorn, "--chdir", dir, "--bind", addr, "--workers", "1", "--access-logfile", "-", "identityapp:application")
	testkit.StartServer(t, cmd, addr, 20*time.Second, nil)
	return "http://" + addr
}

// TestWSGIUpstreamSeesOnlyOurIdentity puts a real WSGI server behind the
// proxy: a client that writes X_Forwarded_User or X_Forwarded_Email beside
// its own credentials would be joined into HTTP_X_FORWARDED_USER ("bob,admin")
// by gunicorn. The application must see exactly backupweb's values.
func TestWSGIUpstreamSeesOnlyOurIdentity(t *testing.T) {
	app := startGunicorn(t)
	// setups needs only the upstream's URL for these types.
	up := &upstream{Server: &httptest.Server{URL: app}}
	all := setups(t, up)
	for _, name := range []string{"none", "basic", "flask-login"} {
		t.Run(name, func(t *testing.T) {
			s := all[name]()
			req, _ := http.NewRequest("GET", s.g.url+"/whoami", nil)
			for k, v := range forgeries {
				req.Header[k] = []string{v}
			}
			req.Header["Upgrade"] = []string{"h2c"}
			req.Header["Connection"] = []string{"Upgrade, HTTP2-Settings"}
			req.Header["HTTP2-Settings"] = []string{"AAMAAABkAARAAAAAAAIAAAAA"}
			if s.mod != nil {
				s.mod(req)
			}
			resp, err := s.client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			err = json.NewDecoder(resp.Body).Decode(&got)
			resp.Body.Close()
			if err != nil || resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d, %v", resp.StatusCode, err)
			}
			want := map[string]string{
				"HTTP_X_FORWARDED_FOR":   "127.0.0.1",
				"HTTP_X_FORWARDED_PROTO": "http",
				"HTTP_X_FORWARDED_HOST":  strings.TrimPrefix(s.g.url, "http://"),
			}
			if s.user != "" {
				want["HTTP_X_FORWARDED_USER"] = s.user
			}
			if len(got) != len(want) {
				t.Errorf("the application saw %v, want exactly %v", got, want)
			}
			for k, v := range want {
				if got[k] != v {
					t.Errorf("the application saw %s = %q, want %q (all: %v)", k, got[k], v, got)
				}
			}
		})
	}
}
