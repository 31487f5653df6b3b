package web

import (
	"net/http"
	"strings"
	"testing"
)

// TestForwardTargetHeaders asks both forward-authentication endpoints, over
// loopback from a trusted proxy, about requests described by the headers of
// each endpoint's row and by the other row's, as a forging client would
// send them through a proxy that passes them on. Only the endpoint's own
// row is read: /auth/request never believes X-Forwarded-Uri, -Method or
// -Host, /auth/forward never X-Original-*; a header of the row that is
// missing leaves that part unknown, which never borrows an anonymous rule
// nor escapes a deny rule, and is logged once naming the header.
func TestForwardTargetHeaders(t *testing.T) {
	const status, admin = "/backups/status.txt", "/backups/admin.txt"
	original := func(method, uri string) map[string]string {
		return map[string]string{"X-Original-Method": method, "X-Original-URI": uri, "X-Original-Host": "backups.example.com"}
	}
	forwarded := func(method, uri string) map[string]string {
		return map[string]string{"X-Forwarded-Method": method, "X-Forwarded-Uri": uri, "X-Forwarded-Host": "backups.example.com"}
	}
	both := func(a, b map[string]string) map[string]string {
		out := map[string]string{}
		for _, m := range []map[string]string{a, b} {
			for k, v := range m {
				out[k] = v
			}
		}
		return out
	}
	cases := []struct {
		name     string
		endpoint string
		header   map[string]string
		user     string // "" for no sign-in
		status   int
		missing  string // the log line's missing attribute; "" for no line
	}{
		{"nginx: the anonymous rule, told right", RequestAuthPath, original("GET", status), "", 200, ""},
		{"nginx: forged X-Forwarded-* borrow nothing", RequestAuthPath, both(original("GET", admin), forwarded("GET", status)), "", 401, ""},
		{"nginx: forged X-Forwarded-* escape no deny rule", RequestAuthPath, both(original("DELETE", admin), forwarded("GET", status)), "bob", 403, ""},
		{"nginx: only X-Forwarded-*, no sign-in", RequestAuthPath, forwarded("GET", status), "", 401, "X-Original-Method,X-Original-URI,X-Original-Host"},
		{"nginx: only X-Forwarded-*, signed in", RequestAuthPath, forwarded("GET", "/backups/x.txt"), "bob", 403, "X-Original-Method,X-Original-URI,X-Original-Host"},
		{"nginx: no method, the anonymous rule is GET only", RequestAuthPath, map[string]string{"X-Original-URI": status, "X-Original-Host": "h"}, "", 401, "X-Original-Method"},
		{"nginx: no host, rules without hosts decide", RequestAuthPath, map[string]string{"X-Original-Method": "GET", "X-Original-URI": status}, "", 200, "X-Original-Host"},
		{"nginx: a URI that is no path", RequestAuthPath, original("GET", "http://backups.example.com"+status), "", 401, "X-Original-URI"},
		{"traefik/caddy: the anonymous rule, told right", ForwardAuthPath, forwarded("GET", status), "", 200, ""},
		{"traefik/caddy: forged X-Original-* borrow nothing", ForwardAuthPath, both(forwarded("GET", admin), original("GET", status)), "", 401, ""},
		{"traefik/caddy: forged X-Original-* escape no deny rule", ForwardAuthPath, both(forwarded("GET", admin), original("GET", "/backups/x.txt")), "bob", 403, ""},
		{"traefik/caddy: no X-Forwarded-Uri, signed in", ForwardAuthPath, map[string]string{"X-Forwarded-Method": "GET", "X-Forwarded-Host": "h", "X-Original-URI": "/backups/x.txt"}, "bob", 403, "X-Forwarded-Uri"},
		{"traefik/caddy: a user the rules allow", ForwardAuthPath, forwarded("GET", "/backups/x.txt"), "bob", 200, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := startRuleServer(t, "forward-auth")
			req, _ := http.NewRequest(http.MethodGet, s.url+c.endpoint, nil)
			req.Header.Set("Accept", "application/json")
			for k, v := range c.header {
				req.Header.Set(k, v)
			}
			if c.user != "" {
				req.Header.Set("X-Test-User", c.user)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != c.status {
				t.Errorf("%d, want %d", resp.StatusCode, c.status)
			}
			logs := s.logs()
			lines := strings.Count(logs, "the proxy did not say which request")
			switch {
			case c.missing == "" && lines != 0:
				t.Errorf("a complete target was logged as unknown:\n%s", logs)
			case c.missing != "" && (lines != 1 || !strings.Contains(logs, "missing="+c.missing+" ") && !strings.Contains(logs, `missing="`+c.missing+`"`)):
				t.Errorf("want one line naming missing=%s:\n%s", c.missing, logs)
			}
		})
	}
}
