package main

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/testkit"
)

// TestSnippetsRefusePathOverrides runs the nginx and Caddy configurations
// of docs/guarding.md as written (addresses aside) in front of backupweb's
// forward-auth configuration (an anonymous rule for /status, a deny rule
// for /admin/) and a recording application. A client writes, raw on the
// wire, each path-override header in each spelling: on the anonymous
// route and signed in. A request whose header reaches backupweb's question
// is refused there (one "auth refused" line) and never reaches the
// application; one the proxy drops first (both drop names holding "_")
// reaches it without any spelling of the header.
func TestSnippetsRefusePathOverrides(t *testing.T) {
	for name, start := range map[string]func(t *testing.T, listen, backupweb, upstream string) string{"nginx": startNginx, "caddy": startCaddy} {
		t.Run(name, func(t *testing.T) {
			app := &recordingApp{seen: map[string][]http.Header{}}
			up := &http.Server{Handler: app}
			uln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			go up.Serve(uln)
			t.Cleanup(func() { up.Close() })
			backupweb, logs := serveGuardingDoc(t, "backupweb's configuration for all three", func(ini, dir string) string {
				groups := filepath.Join(dir, "groups")
				os.WriteFile(groups, []byte("admins: alice\n"), 0o600)
				return ini + "groups_file = " + groups + "\n\n[access]\nrule1 = GET ^/status$ anonymous\nrule2 = * ^/admin/ deny\n"
			})
			front := start(t, testkit.FreeAddr(t), backupweb, uln.Addr().String())
			frontURL, _ := url.Parse(front)

			alice := testkit.Client()
			alice.Timeout = 10 * time.Second
			testkit.SignIn(t, alice, testkit.Login{Page: front + "/login", User: "alice", Password: "alice-pw"})
			var cookies []string
			for _, c := range alice.Jar.Cookies(frontURL) {
				cookies = append(cookies, c.Name+"="+c.Value)
			}
			signedIn := "Cookie: " + strings.Join(cookies, "; ") + "\r\n"

			for _, header := range []string{
				"X-Original-URL", "x-original-url", "X_Original_URL",
				"X-Rewrite-URL", "x-rewrite-url", "X_Rewrite_URL",
				"X-Override-URL", "X-OVERRIDE-URL", "x_override_url",
			} {
				for _, c := range []struct{ who, path, cookie string }{
					{"anonymous", "/status", ""},
					{"alice", "/app/page", signedIn},
				} {
					what := name + " " + c.who + " " + c.path + " with " + header
					_, before := app.last(c.path)
					refusedBefore := strings.Count(logs.String(), `msg="auth refused"`)
					status := rawThrough(t, frontURL.Host, "GET "+c.path+" HTTP/1.1\r\nHost: "+frontURL.Host+
						"\r\nConnection: close\r\nAccept: application/json\r\n"+header+": /admin/secret\r\n"+c.cookie)
					h, after := app.last(c.path)
					refused := strings.Count(logs.String(), `msg="auth refused"`) - refusedBefore
					switch {
					case after == before:
						if status/100 == 2 {
							t.Errorf("%s: %d without reaching the application", what, status)
						}
						if refused != 1 {
							t.Errorf("%s: %d auth refused lines, want one:\n%s", what, refused, logs)
						}
					case after == before+1:
						// Only a spelling the proxy drops itself may pass.
						if !strings.Contains(header, "_") {
							t.Errorf("%s: reached the application (%d)", what, status)
						}
						for k := range h {
							if n := strings.ReplaceAll(strings.ToLower(k), "_", "-"); n == "x-original-url" || n == "x-rewrite-url" || n == "x-override-url" {
								t.Errorf("%s: the application got %s %q", what, k, h[k])
							}
						}
					default:
						t.Errorf("%s: the application was asked %d times", what, after-before)
					}
				}
			}
		})
	}
}

// rawThrough writes head (request line and headers, each ending in CRLF,
// without the blank line) to addr and returns the answer's status.
func rawThrough(t *testing.T, addr, head string) int {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(20 * time.Second))
	if _, err := io.WriteString(c, head+"\r\n"); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("no answer to %q: %v", head, err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}
