package web

import (
	"io"
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
		{"nginx: a URI that is no path", RequestAuthPath, original("GET", "status"), "", 401, "X-Original-URI"},
		{"nginx: an absolute-form URI is read as its path", RequestAuthPath, original("GET", "http://backups.example.com"+status), "", 200, ""},
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

// TestRefusedPage asks RefusedPath, as nginx's error_page for a 403 of
// /auth/request does (the request told in X-Forwarded-*, over loopback
// from a trusted proxy): a refusal is the styled page a person reads (JSON
// when asked for), and a request admitted after all goes back to where it
// was going, as a local path only.
func TestRefusedPage(t *testing.T) {
	s := startRuleServer(t, "forward-auth")
	cases := []struct {
		name, user, method, uri, host, accept string
		status                                int
		says, location, contentType           string
	}{
		{"a deny rule, for a person", "bob", "GET", "/backups/admin.txt", "", "text/html", 403, "may not use this page", "", "text/html"},
		{"a deny rule, for a program", "bob", "GET", "/backups/admin.txt", "", "application/json", 403, `"error"`, "", "application/json"},
		{"a second_factor rule", "alice", "POST", "/backups/admin.txt", "", "text/html", 403, "second factor", "", "text/html"},
		{"admitted after all", "bob", "GET", "/backups/ops.txt?x=1", "", "text/html", 303, "", "/backups/ops.txt?x=1", ""},
		{"an anonymous rule", "", "GET", "/backups/status.txt", "", "text/html", 303, "", "/backups/status.txt", ""},
		{"admitted, another host", "bob", "GET", "/backups/ops.txt", "elsewhere.example", "text/html", 303, "", "/", ""},
		{"no sign-in", "", "GET", "/backups/x.txt", "", "text/html", 401, "", "", ""},
	}
	nf := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodGet, s.url+RefusedPath, nil)
			req.Header.Set("Accept", c.accept)
			req.Header.Set("X-Forwarded-Method", c.method)
			req.Header.Set("X-Forwarded-Uri", c.uri)
			if c.host != "" {
				req.Header.Set("X-Forwarded-Host", c.host)
			}
			if c.user != "" {
				req.Header.Set("X-Test-User", c.user)
			}
			resp, err := nf.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != c.status || !strings.Contains(string(b), c.says) || resp.Header.Get("Location") != c.location ||
				!strings.HasPrefix(resp.Header.Get("Content-Type"), c.contentType) {
				t.Errorf("%d %s Location %q: %.300q; want %d %s saying %q, Location %q", resp.StatusCode, resp.Header.Get("Content-Type"),
					resp.Header.Get("Location"), b, c.status, c.contentType, c.says, c.location)
			}
			if c.contentType == "text/html" && !strings.Contains(string(b), `rel="stylesheet"`) {
				t.Errorf("not the styled page: %.300q", b)
			}
		})
	}
}
