package web

import (
	"bufio"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/access"
	"github.com/backupweb/backupweb/internal/peer"
	"github.com/backupweb/backupweb/internal/testkit/logtest"
)

// TestPathOverrideRefusedOnForwardAuth: a forward-authentication question
// whose request carries a path-override header, in any spelling (written
// raw on the wire, as a proxy passes the client's headers on), is refused
// with 400 and one "auth refused" line, on both endpoints, before sign-in
// on an anonymous route as for a signed-in user; X-Original-URI, which the
// nginx snippet sets, is not one.
func TestPathOverrideRefusedOnForwardAuth(t *testing.T) {
	rs := &access.Rules{}
	for i, l := range twoWayRules {
		r, err := access.ParseRule("rule"+string(rune('1'+i)), l, false)
		must(t, err)
		rs.List = append(rs.List, r)
	}
	logs := &logtest.Buffer{}
	log := slog.New(slog.NewTextHandler(logs, nil))
	srv := httptest.NewServer(NewHandler(Options{Provider: headerProvider{}, Logger: log, Rules: rs, NoCatalog: true,
		Resolver: peer.NewResolver([]netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")})}))
	t.Cleanup(srv.Close)
	addr := strings.TrimPrefix(srv.URL, "http://")
	ask := func(endpoint, path, extra string) (int, string) {
		t.Helper()
		c, err := net.Dial("tcp", addr)
		must(t, err)
		defer c.Close()
		c.SetDeadline(time.Now().Add(20 * time.Second))
		head := "GET " + endpoint + " HTTP/1.1\r\nHost: " + addr + "\r\nConnection: close\r\nAccept: application/json\r\n" +
			"X-Original-Method: GET\r\nX-Original-URI: " + path + "\r\nX-Original-Host: backups.example.com\r\n" +
			"X-Forwarded-Method: GET\r\nX-Forwarded-Uri: " + path + "\r\nX-Forwarded-Host: backups.example.com\r\nX-Forwarded-Proto: http\r\n" +
			extra + "\r\n"
		_, err = io.WriteString(c, head)
		must(t, err)
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		must(t, err)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode, string(body)
	}
	for _, endpoint := range []string{RequestAuthPath, ForwardAuthPath} {
		// Without one: the rules' answers.
		if st, body := ask(endpoint, "/public/x", ""); st != 200 {
			t.Fatalf("%s /public/x: %d %s", endpoint, st, body)
		}
		if st, body := ask(endpoint, "/app", "X-Test-User: carol\r\n"); st != 200 {
			t.Fatalf("%s /app as carol: %d %s", endpoint, st, body)
		}
		for _, name := range []string{
			"X-Original-URL", "x-original-url", "X_Original_URL", "X-ORIGINAL_url",
			"X-Rewrite-URL", "x_rewrite_url", "X-REWRITE-URL",
			"X-Override-URL", "x-override-url", "X_Override_Url",
		} {
			for _, who := range []struct{ path, user string }{{"/public/x", ""}, {"/app", "X-Test-User: carol\r\n"}} {
				before := strings.Count(logs.String(), `msg="auth refused"`)
				st, body := ask(endpoint, who.path, name+": /admin/users\r\n"+who.user)
				if st != http.StatusBadRequest || !strings.Contains(body, "X-Original-URL") {
					t.Errorf("%s %s with %s: %d %s, want 400", endpoint, who.path, name, st, body)
				}
				refused := strings.Count(logs.String(), `msg="auth refused"`)
				if refused != before+1 {
					t.Errorf("%s %s with %s: %d auth refused lines, want one:\n%s", endpoint, who.path, name, refused-before, logs)
				}
				if last := lastRefusal(strings.Split(logs.String(), "\n")); !strings.Contains(last, `reason="ambiguous request"`) || !strings.Contains(last, "path override header X-") {
					t.Errorf("%s with %s: the line does not say why: %s", endpoint, name, last)
				}
			}
		}
	}
}

// lastRefusal returns the last "auth refused" line of lines.
func lastRefusal(lines []string) string {
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.Contains(lines[i], `msg="auth refused"`) {
			return lines[i]
		}
	}
	return ""
}
