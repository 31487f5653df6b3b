package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/backupweb/backupweb/internal/testkit"
)

// TestAccessCommandAnswersAsServe: for every form of a path that reads two
// ways, for plain paths, for "//x" and absolute-form targets and for a
// _method parameter, `backupweb access` answers what `serve` (proxy mode,
// basic, over loopback) does for the same signed-in user: allow or
// anonymous where serve passes the request on, deny or second_factor where
// it answers 403.
func TestAccessCommandAnswersAsServe(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	t.Cleanup(up.Close)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "backupweb.ini")
	ini := fmt.Sprintf("[server]\nlisten = 127.0.0.1:0\nstate_dir = %s\naccess_log = false\n[proxy]\nupstream = %s\n"+
		"[authentication]\ntype = basic\nusername = alice\npassword = correct horse\nuse_bcrypt = false\n"+
		"[access]\nrule1 = GET ^/public/ anonymous\nrule2 = * ^/admin/ deny\nrule3 = DELETE,PUT,PATCH ^/api/ deny\n",
		filepath.Join(dir, "state"), up.URL)
	if err := os.WriteFile(cfg, []byte(ini), 0o600); err != nil {
		t.Fatal(err)
	}
	base := "http://" + startServe(t, nil, "-config", cfg).addr
	type request struct {
		method, target string
		lets           bool
	}
	requests := []request{
		{"GET", "/public/x", true}, {"GET", "/admin/users", false}, {"GET", "/other", true}, {"GET", "/other;jsessionid=1", true},
		{"GET", "//other", true}, {"GET", "http://backupweb.test/other", true}, {"GET", "http://backupweb.test/admin/users", false},
		{"POST", "/api/x", true}, {"POST", "/api/x?_method=DELETE", false}, {"POST", "/api/x?a=1;_method=put", false},
	}
	for _, a := range testkit.AmbiguousTargets {
		requests = append(requests, request{"GET", a.Target, false})
	}
	for _, r := range requests {
		req := testkit.TargetRequest(r.method, base, r.target)
		req.SetBasicAuth("alice", "correct horse")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		c, out, stderr := testCLI(context.Background(), "", nil)
		if code := c.main([]string{"access", "-config", cfg, "-user", "alice", "-method", r.method, "-path", r.target}); code != exitOK {
			t.Errorf("access %s %s: exit %d: %s", r.method, r.target, code, stderr)
			continue
		}
		decision, _, _ := strings.Cut(out.String(), " ")
		lets := decision == "allow" || decision == "anonymous"
		if served := resp.StatusCode == http.StatusOK; lets != served || lets != r.lets || !served && resp.StatusCode != http.StatusForbidden {
			t.Errorf("%s %s: serve answered %d, access %q; want both to let it through: %v", r.method, r.target, resp.StatusCode, out.String(), r.lets)
		}
	}
}

// TestAccessCommandTargets: -path takes what a request line may hold.
func TestAccessCommandTargets(t *testing.T) {
	cfg, _ := accessConfig(t, "rule6 = * ^/x$ deny user:bob\nrule6.hosts = other.example\n")
	for _, tt := range []struct {
		args []string
		code int
		out  string
		err  string
	}{
		{[]string{"-path", "//admin/x"}, exitOK, "deny default\n", "several ways"},
		{[]string{"-path", "http://backups.example/admin/x"}, exitOK, "deny rule3\n", ""},
		{[]string{"-path", "http://other.example/x"}, exitOK, "deny rule6\n", ""},
		{[]string{"-path", "http://other.example/x", "-host", "OTHER.example:443"}, exitOK, "deny rule6\n", ""},
		{[]string{"-path", "http://other.example/x", "-host", "backups.example"}, exitUsage, "", "differ"},
		{[]string{"-path", "/x?_method=DELETE", "-groups", "operators"}, exitOK, "deny rule5\n", ""},
		{[]string{"-path", "ftp://host/x"}, exitUsage, "", "-path must be a path"},
		{[]string{"-path", "*"}, exitUsage, "", "-path must be a path"},
	} {
		c, out, stderr := testCLI(context.Background(), "", nil)
		code := c.main(append([]string{"access", "-config", cfg, "-user", "bob"}, tt.args...))
		if code != tt.code || out.String() != tt.out || !strings.Contains(stderr.String(), tt.err) {
			t.Errorf("access %q: exit %d, out %q, err %q; want %d %q %q", tt.args, code, out.String(), stderr.String(), tt.code, tt.out, tt.err)
		}
	}
}
