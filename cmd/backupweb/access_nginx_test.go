package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/testkit"
	"github.com/backupweb/backupweb/internal/testkit/toolstest"
)

// TestRulesBehindNginx runs nginx's auth_request in front of an
// application, with backupweb (basic, a groups file, the backup-service
// rules of docs/access.md) answering it, and checks over loopback that
// nginx passes on each rule's decision, including for paths nginx itself
// would read differently from the rules' plain form.
func TestRulesBehindNginx(t *testing.T) {
	toolstest.Need(t, "nginx", "nginx-light")
	up := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "app saw %s user=%q groups=%q", r.URL.RequestURI(), r.Header.Get("X-Forwarded-User"), r.Header.Get("X-Forwarded-Groups"))
	})}
	uln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go up.Serve(uln)
	t.Cleanup(func() { up.Close() })

	cfg, _ := accessConfig(t, "")
	ini, _ := os.ReadFile(cfg)
	conf := strings.Replace(string(ini), "[server]\n", "[server]\nmode = forward-auth\ntrusted_proxies = 127.0.0.1\n", 1)
	conf = conf[:strings.Index(conf, "[backups]")] + conf[strings.Index(conf, "[authentication]"):]
	os.WriteFile(cfg, []byte(conf), 0o600)
	backupweb := startServe(t, nil, "-config", cfg).addr

	listen := testkit.FreeAddr(t)
	runNginx(t, listen, fmt.Sprintf(`    server {
        listen %[1]s;
        location / {
            auth_request /_auth;
            auth_request_set $user $upstream_http_x_auth_request_user;
            auth_request_set $groups $upstream_http_x_auth_request_groups;
            proxy_set_header X-Forwarded-User $user;
            proxy_set_header X-Forwarded-Groups $groups;
            proxy_pass http://%[3]s;
        }
        location = /_auth {
            internal;
            proxy_pass http://%[2]s/auth/request;
            proxy_pass_request_body off;
            proxy_set_header Content-Length "";
            proxy_set_header X-Original-Method $request_method;
            proxy_set_header X-Original-URI $request_uri;
            proxy_set_header X-Original-Host $host;
        }
    }
`, listen, backupweb, uln.Addr().String()))

	client := &http.Client{Timeout: 10 * time.Second}
	for _, tt := range []struct {
		method, path string
		signedIn     bool
		status       int
		body         string
	}{
		{"GET", "/status", false, 200, `app saw /status user="" groups=""`},
		{"GET", "/status", true, 200, `app saw /status user="" groups=""`},
		{"GET", "/api/backups", false, 401, ""},
		{"GET", "/api/backups?next=/status", false, 401, ""},
		{"GET", "/api/backups", true, 200, `app saw /api/backups user="admin" groups="admins,operators"`},
		{"DELETE", "/api/backups/x", true, 403, ""},      // rule5: operators change nothing
		{"POST", "/admin/users", true, 403, ""},          // rule2: no second factor under basic
		{"GET", "/status/../admin/users", true, 403, ""}, // nginx cleans it; the rules see both readings
		{"GET", "/status/%2e%2e/admin/x", true, 403, ""}, // encoded dot segments
		{"GET", "/status/..%2Fadmin/x", true, 403, ""},   // encoded slash
	} {
		req, _ := http.NewRequest(tt.method, "http://"+listen+tt.path, nil)
		if tt.signedIn {
			req.SetBasicAuth("admin", "correct horse")
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tt.status || tt.body != "" && string(b) != tt.body {
			t.Errorf("%s %s (signed in %v): %d %q, want %d %q", tt.method, tt.path, tt.signedIn, resp.StatusCode, b, tt.status, tt.body)
		}
	}
}
