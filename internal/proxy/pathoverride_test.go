package proxy_test

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/proxy"
)

// pathOverrides are the path-override headers in the spellings a client
// may write, each sent to the wire as given.
var pathOverrides = []string{
	"X-Original-URL", "x-original-url", "X_Original_URL", "X-ORIGINAL_url",
	"X-Rewrite-URL", "x_rewrite_url", "X-REWRITE-URL",
	"X-Override-URL", "x-override-url", "X_Override_Url",
}

// rawExchange writes head (the request line and headers, without the
// blank line that ends them) to addr over a fresh TCP connection, exactly
// as given, and returns the answer.
func rawExchange(t *testing.T, addr, head string) *http.Response {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(20 * time.Second))
	if _, err := c.Write([]byte(strings.ReplaceAll(head, "\n", "\r\n") + "\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("no answer to %q: %v", head, err)
	}
	return resp
}

// TestPathOverrideHeadersNeverReachTheUpstream: whatever spelling of
// X-Original-URL, X-Rewrite-URL or X-Override-URL a client writes (raw, on
// the wire), the upstream never sees it, on a skip_auth_routes route
// without sign-in as on a signed-in request; X-Original-URI passes, as any
// other header of the client's.
func TestPathOverrideHeadersNeverReachTheUpstream(t *testing.T) {
	up := startUpstream(t)
	g := guardRules(t, up.URL, proxy.Options{}, skipAuthRoutes(t, "GET=^/public/health$"), basicSetup(t))
	addr := strings.TrimPrefix(g.url, "http://")
	creds := "Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte("api:pw"))
	for _, name := range pathOverrides {
		for _, tt := range []struct{ who, path, creds string }{
			{"anonymous", "/public/health", ""},
			{"signed in", "/app/page", "\n" + creds},
		} {
			head := "GET " + tt.path + " HTTP/1.1\nHost: " + addr + "\nConnection: close\n" +
				name + ": /admin\nX-Original-URI: /kept" + tt.creds
			resp := rawExchange(t, addr, head)
			var got seen
			json.NewDecoder(resp.Body).Decode(&got)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("%s %s with %s: %d, want 200 from the upstream", tt.who, tt.path, name, resp.StatusCode)
			}
			for _, o := range []string{"X-Original-URL", "X-Rewrite-URL", "X-Override-URL"} {
				if v := folded(got.Header, o); len(v) > 0 {
					t.Errorf("%s %s with %s: the upstream saw %s %q", tt.who, tt.path, name, o, v)
				}
			}
			if v := folded(got.Header, "X-Original-URI"); len(v) != 1 || v[0] != "/kept" {
				t.Errorf("%s %s: X-Original-URI reached the upstream as %q, want /kept", tt.who, tt.path, v)
			}
		}
	}
}
