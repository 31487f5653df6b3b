package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/app"
	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/config"
	"github.com/backupweb/backupweb/internal/groupfile"
	"github.com/backupweb/backupweb/internal/testkit"
)

// accessConfig writes a configuration with basic authentication, a groups
// file and the rules of docs/access.md's backup-service example, and
// returns its path and the groups file's.
func accessConfig(t *testing.T, extra string) (cfgPath, groupsPath string) {
	t.Helper()
	dir := t.TempDir()
	groupsPath = filepath.Join(dir, "groups")
	if err := os.WriteFile(groupsPath, []byte("admins: admin\noperators: admin\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	os.Mkdir(filepath.Join(dir, "backups"), 0o700)
	os.WriteFile(filepath.Join(dir, "backups", "nightly.tar"), []byte("x"), 0o600)
	cfgPath = filepath.Join(dir, "backupweb.ini")
	ini := "[server]\nlisten = 127.0.0.1:0\nstate_dir = " + filepath.Join(dir, "state") + "\n" +
		"[backups]\ndir = " + filepath.Join(dir, "backups") + "\n" +
		"[authentication]\ntype = basic\nusername = admin\npassword = correct horse\nuse_bcrypt = false\ngroups_file = " + groupsPath + "\n" +
		"[access]\n" +
		"rule1 = GET ^/status$ anonymous\n" +
		"rule2 = * ^/admin/ second_factor group:admins\n" +
		"rule3 = * ^/admin/ deny\n" +
		"rule4 = GET,HEAD ^/ allow group:operators\n" +
		"rule5 = * ^/ deny group:operators\n" + extra
	if err := os.WriteFile(cfgPath, []byte(ini), 0o600); err != nil {
		t.Fatal(err)
	}
	return cfgPath, groupsPath
}

func TestAccessCommand(t *testing.T) {
	cfg, _ := accessConfig(t, "")
	for _, tt := range []struct {
		args []string
		code int
		out  string
		err  string
	}{
		{[]string{"-user", "admin", "-method", "POST", "-path", "/admin/x"}, exitOK, "second_factor rule2\n", ""},
		{[]string{"-user", "admin", "-method", "POST", "-path", "/admin/x", "-second-factor"}, exitOK, "second_factor rule2\n", ""},
		{[]string{"-user", "bob", "-path", "/admin/x"}, exitOK, "deny rule3\n", ""},
		{[]string{"-user", "admin", "-path", "/api/backups?x=/status"}, exitOK, "allow rule4\n", ""},
		{[]string{"-user", "admin", "-method", "DELETE", "-path", "/api/backups"}, exitOK, "deny rule5\n", ""},
		{[]string{"-user", "bob", "-method", "DELETE", "-path", "/api/backups"}, exitOK, "allow default\n", ""},
		{[]string{"-user", "bob", "-path", "/status"}, exitOK, "anonymous rule1\n", ""},
		{[]string{"-user", "bob", "-path", "/status/../admin/x"}, exitOK, "deny default\n", "several ways"},
		{[]string{"-user", "bob", "-groups", "operators", "-method", "PUT", "-path", "/x"}, exitOK, "deny rule5\n", ""},
		{[]string{"-path", "/x"}, exitUsage, "", "-user NAME is required"},
		{[]string{"-user", "bob", "-path", "x"}, exitUsage, "", "-path must be a path"},
		{[]string{"-user", "bob", "-path", "/x", "extra"}, exitUsage, "", "unexpected arguments"},
	} {
		c, out, stderr := testCLI(context.Background(), "", nil)
		code := c.main(append([]string{"access", "-config", cfg}, tt.args...))
		if code != tt.code || out.String() != tt.out || !strings.Contains(stderr.String(), tt.err) {
			t.Errorf("access %q: exit %d, out %q, err %q; want %d %q %q", tt.args, code, out.String(), stderr.String(), tt.code, tt.out, tt.err)
		}
	}
	bad, _ := accessConfig(t, "rule6 = GET ^/admin/x allow user:admin\n")
	c, out, stderr := testCLI(context.Background(), "", nil)
	if code := c.main([]string{"access", "-config", bad, "-user", "a", "-path", "/"}); code != exitError || out.String() != "" ||
		!strings.Contains(stderr.String(), "rule6 (GET ^/admin/x allow user:admin) never decides: rule3") {
		t.Errorf("shadowed rule: exit %d, out %q, err %q", code, out.String(), stderr.String())
	}
}

// TestAccessCommandBrokenGroups: with a groups file that cannot be read the
// configuration does not start, so the command says so (exit 1).
func TestAccessCommandBrokenGroups(t *testing.T) {
	cfg, groups := accessConfig(t, "")
	os.WriteFile(groups, []byte("admins admin\n"), 0o600)
	c, _, stderr := testCLI(context.Background(), "", nil)
	if code := c.main([]string{"access", "-config", cfg, "-user", "admin", "-path", "/"}); code != exitError || !strings.Contains(stderr.String(), groups+":1: no colon") {
		t.Errorf("exit %d: %s", code, stderr.String())
	}
}

func TestCheckConfigExplain(t *testing.T) {
	cfg, _ := accessConfig(t, "default = deny\nrule4.hosts = backups.example.com\n")
	c, out, stderr := testCLI(context.Background(), "", nil)
	if code := c.main([]string{"check-config", "-config", cfg, "-explain"}); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	want := "access rules, in order (the first that names a request decides):\n" +
		"  rule1: GET ^/status$ anonymous\n" +
		"  rule2: * ^/admin/ second_factor group:admins\n" +
		"  rule3: * ^/admin/ deny\n" +
		"  rule4: GET,HEAD ^/ allow group:operators (hosts backups.example.com)\n" +
		"  rule5: * ^/ deny group:operators\n" +
		"  default: deny (no rule named the request)\n"
	if !strings.HasPrefix(out.String(), want) {
		t.Errorf("check-config -explain printed:\n%s\nwant it to start:\n%s", out.String(), want)
	}
	if !strings.Contains(stderr.String(), "rule2: is second_factor, but authentication type basic has no second factor") {
		t.Errorf("no warning about second_factor under basic:\n%s", stderr.String())
	}
	if !strings.Contains(out.String(), "\nserved hosts: backups.example.com (") {
		t.Errorf("check-config -explain does not print the served hosts:\n%s", out.String())
	}
	if strings.Contains(stderr.String(), "default = allow") {
		t.Errorf("a warning about default = allow under default = deny:\n%s", stderr.String())
	}
}

// TestCheckConfigServedHosts: -explain prints the hosts served (the rules'
// and public_url's, or any), and check-config warns when rules name hosts
// and default = allow leaves the others open.
func TestCheckConfigServedHosts(t *testing.T) {
	for _, c := range []struct {
		name, extra, served string
		warn                bool
	}{
		{"no hosts", "", "served hosts: any (no rule names hosts)", false},
		{"hosts, default allow", "rule4.hosts = app.example.com, .example.org\n", "served hosts: app.example.com, .example.org (", true},
		{"hosts and public_url", "default = deny\nrule4.hosts = app.example.com\n", "served hosts: app.example.com, backups.example.com (", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg, _ := accessConfig(t, c.extra)
			if strings.Contains(c.served, "backups.example.com") {
				b, _ := os.ReadFile(cfg)
				b = []byte(strings.Replace(string(b), "[server]\n", "[server]\npublic_url = https://Backups.Example.com:8443\n", 1))
				if err := os.WriteFile(cfg, b, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			cli, out, stderr := testCLI(context.Background(), "", nil)
			if code := cli.main([]string{"check-config", "-config", cfg, "-explain"}); code != exitOK {
				t.Fatalf("exit %d: %s", code, stderr.String())
			}
			if !strings.Contains(out.String(), "\n"+c.served) {
				t.Errorf("printed:\n%s\nwant a line starting %q", out.String(), c.served)
			}
			if got := strings.Contains(stderr.String(), "rules name hosts, and default = allow"); got != c.warn {
				t.Errorf("warning %v, want %v:\n%s", got, c.warn, stderr.String())
			}
		})
	}
}

// TestServeFollowsGroupsFile: serve with basic authentication and a groups
// file; an edit of the file changes what the same credentials may do at the
// next request (the poller), and a broken edit refuses what depends on a
// group.
func TestServeFollowsGroupsFile(t *testing.T) {
	cfg, groups := accessConfig(t, "")
	s := startServe(t, nil, "-config", cfg)
	addr, stderr := s.addr, s.log
	status := func(method, path string) int {
		req, _ := http.NewRequest(method, "http://"+addr+path, nil)
		req.SetBasicAuth("admin", "correct horse")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	waitStatus := func(method, path string, want int) {
		t.Helper()
		testkit.WaitUntil(t, 30*time.Second, func() bool { return status(method, path) == want }, func() string {
			return fmt.Sprintf("%s %s never answered %d\n%s", method, path, want, stderr.String())
		})
	}
	if got := status("GET", "/api/backups"); got != 200 {
		t.Fatalf("operator reads: %d", got)
	}
	if got := status("GET", "/api/me"); got != 200 {
		t.Fatalf("operator reads /api/me: %d", got)
	}
	writeGroups(t, groups, "admins: admin\n")
	waitStatus("GET", "/api/backups", 200) // default allow: no operator rule names them now
	writeGroups(t, groups, "admins: admin\noperators admin\n")
	waitStatus("GET", "/api/backups", 403) // rule4 names a group: unknown groups refuse
	if !strings.Contains(stderr.String(), `reason="groups unknown"`) {
		t.Errorf("no refusal logged for unknown groups:\n%s", stderr.String())
	}
	writeGroups(t, groups, "operators: admin\n")
	waitStatus("GET", "/api/backups", 200)
	s.stop()
}

func writeGroups(t *testing.T, path, content string) {
	t.Helper()
	tmp := path + ".new"
	if err := os.WriteFile(tmp, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// TestSIGHUPReloadsGroups: SIGHUP reads the groups file again, beside the
// provider's own reload.
func TestSIGHUPReloadsGroups(t *testing.T) {
	cfgPath, groups := accessConfig(t, "")
	cfg := config.Load(cfgPath, func(string) (string, bool) { return "", false })
	g, err := groupfile.Open(groups, nil)
	if err != nil {
		t.Fatal(err)
	}
	g.PollInterval = -1 // only the signal may reload it
	p, err := app.NewProvider(cfg.Auth, auth.Deps{Logger: slog.New(slog.DiscardHandler), StateDir: t.TempDir()}, func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	c, _, _ := testCLI(context.Background(), "", nil)
	a := &app.App{Provider: p, Groups: g}
	stop := c.keepCurrent(a.Watchers(), a.Reloaders())
	defer stop()
	writeGroups(t, groups, "readers: admin\n")
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	testkit.WaitUntil(t, 20*time.Second, func() bool {
		gs, _ := g.GroupsOf("admin")
		return len(gs) == 1 && gs[0] == "readers"
	}, func() string { return "SIGHUP did not reload the groups file" })
}

// TestDocsAccessExample runs the backup-service example of docs/access.md
// (its [access] section and groups file, as the page shows them) through
// the access command and checks the page's table.
func TestDocsAccessExample(t *testing.T) {
	doc, err := os.ReadFile("../../docs/access.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(doc)
	_, ini, ok := strings.Cut(text, "```ini\n[authentication]\n")
	ini, _, _ = strings.Cut(ini, "```")
	_, rules, found := strings.Cut(ini, "[access]\n")
	_, groups, ok2 := strings.Cut(text, "with `/etc/backupweb/groups`:\n\n```\n")
	groups, _, _ = strings.Cut(groups, "```")
	if !ok || !found || !ok2 {
		t.Fatal("the example is not in docs/access.md as expected")
	}
	dir := t.TempDir()
	gp := filepath.Join(dir, "groups")
	os.WriteFile(gp, []byte(groups), 0o600)
	cfg := filepath.Join(dir, "backupweb.ini")
	os.WriteFile(cfg, []byte("[server]\nmode = forward-auth\n[authentication]\ntype = basic\nusername = alice\npassword = x\nuse_bcrypt = false\ngroups_file = "+gp+"\n[access]\n"+rules), 0o600)
	for _, tt := range []struct {
		user, method, path string
		second             bool
		want               string
	}{
		{"carol", "GET", "/status", false, "anonymous rule1"},
		{"alice", "POST", "/admin/users", true, "second_factor rule2"},
		{"bob", "POST", "/admin/users", false, "deny rule3"},
		{"carol", "POST", "/admin/users", false, "deny rule3"},
		{"bob", "GET", "/api/backups", false, "allow rule4"},
		{"carol", "GET", "/api/backups", false, "allow default"},
		{"alice", "DELETE", "/api/backups/x", false, "deny rule5"},
		{"bob", "DELETE", "/api/backups/x", false, "deny rule5"},
		{"carol", "DELETE", "/api/backups/x", false, "allow default"},
	} {
		args := []string{"access", "-config", cfg, "-user", tt.user, "-method", tt.method, "-path", tt.path}
		if tt.second {
			args = append(args, "-second-factor")
		}
		c, out, stderr := testCLI(context.Background(), "", nil)
		if code := c.main(args); code != exitOK || strings.TrimSpace(out.String()) != tt.want {
			t.Errorf("%s %s %s: exit %d %q (%s), want %q", tt.user, tt.method, tt.path, code, out.String(), stderr.String(), tt.want)
		}
	}
}

// TestFlaskLoginGroupsChangeWithinASession: a flask-login session made
// before the groups file changed is judged by the new groups at its next
// request, in proxy mode, and the upstream is told the new groups; the
// session itself is neither ended nor remade.
func TestFlaskLoginGroupsChangeWithinASession(t *testing.T) {
	dir := t.TempDir()
	users := addUsers(t, dir, "alice")
	groups := filepath.Join(dir, "groups")
	writeGroups(t, groups, "readers: alice\n")
	seenGroups := make(chan string, 10)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seenGroups <- r.Header.Get("X-Forwarded-Groups")
	}))
	defer up.Close()
	in := startInstance(t, fmt.Sprintf(`[server]
listen = 127.0.0.1:0
state_dir = %s
access_log = false
[proxy]
upstream = %s
[authentication]
type = flask-login
use_bcrypt = true
users_file = %s
groups_file = %s
[access]
rule1 = * ^/admin deny group:interns
`, filepath.Join(dir, "state"), up.URL, users, groups))
	sid, st := signIn(t, in.url, "alice", "pw-alice")
	if sid == "" {
		t.Fatalf("sign-in refused: %d", st)
	}
	if code, _, _ := send(t, "GET", in.url+"/admin/x", sid, nil, ""); code != 200 || <-seenGroups != "readers" {
		t.Fatalf("before the change: %d", code)
	}
	writeGroups(t, groups, "readers: alice\ninterns: alice\n")
	code := 0
	testkit.WaitUntil(t, 30*time.Second, func() bool {
		code, _, _ = send(t, "GET", in.url+"/admin/x", sid, nil, "")
		if code == 403 {
			return true
		}
		select {
		case <-seenGroups:
		default:
		}
		return false
	}, func() string { return fmt.Sprintf("still %d after the groups changed", code) })
	if code, _, _ := send(t, "GET", in.url+"/other", sid, nil, ""); code != 200 || <-seenGroups != "interns,readers" {
		t.Fatalf("the same session elsewhere: %d", code)
	}
}

// TestAccessCommandUnknownUser: a user the configuration does not know
// still gets the decision (exit 0), with a warning on standard error; a
// known user gets none; for oauth the name is said not to be checked.
func TestAccessCommandUnknownUser(t *testing.T) {
	basicCfg, _ := accessConfig(t, "")
	dir := t.TempDir()
	users := filepath.Join(dir, "users")
	os.WriteFile(users, []byte("alice:$2b$12$qfeZmHvsxlDW8N2/YfnqZudyqkieQPQ4UbLzZH9l3wVK30hYkYJAm\n"), 0o600)
	loginCfg := filepath.Join(dir, "login.ini")
	os.WriteFile(loginCfg, []byte("[server]\nmode = forward-auth\nstate_dir = "+filepath.Join(dir, "state")+
		"\n[authentication]\ntype = flask-login\nuse_bcrypt = true\nusers_file = "+users+"\n"), 0o600)
	oauthCfg := filepath.Join(dir, "oauth.ini")
	os.WriteFile(oauthCfg, []byte("[server]\nmode = forward-auth\nstate_dir = "+filepath.Join(dir, "state")+
		"\n[authentication]\ntype = oauth\nprovider = google\nclient_id = id\nclient_secret = ${CS}\n"+
		"redirect_uri = https://backups.example.com/oauth/callback\nauthorized_domains = example.com\n"), 0o600)
	env := map[string]string{"BACKUP_SECRET_KEY": strings.Repeat("ab", 32), "CS": "client-secret"}
	for _, tt := range []struct {
		name, cfg, user, out, warn string
	}{
		{"flask-login, in the user file", loginCfg, "alice", "allow default\n", ""},
		{"flask-login, in no user file", loginCfg, "carol", "allow default\n", `warning: user "carol" is in no user file (` + users + ")"},
		{"basic, the configured user", basicCfg, "admin", "allow rule4\n", ""},
		{"basic, another user", basicCfg, "carol", "allow default\n", `warning: user "carol" is not the configured user (username = admin)`},
		{"oauth", oauthCfg, "carol@example.com", "allow default\n", "note: type oauth has no list of users here (its identity provider names them): the user name is not checked"},
	} {
		c, out, stderr := testCLI(context.Background(), "", env)
		code := c.main([]string{"access", "-config", tt.cfg, "-user", tt.user, "-path", "/x"})
		if code != exitOK || out.String() != tt.out {
			t.Errorf("%s: exit %d, out %q, err %q; want 0 %q", tt.name, code, out.String(), stderr.String(), tt.out)
		}
		said := strings.Contains(stderr.String(), "backupweb access:")
		if tt.warn == "" && said || !strings.Contains(stderr.String(), tt.warn) {
			t.Errorf("%s: standard error %q, want %q", tt.name, stderr.String(), tt.warn)
		}
	}
}
