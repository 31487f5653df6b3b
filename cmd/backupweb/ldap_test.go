package main

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/backupweb/backupweb/internal/testkit"
	"github.com/backupweb/backupweb/internal/testkit/ldaptest"
)

// TestLDAPExampleAsPasted serves the OpenLDAP example of
// docs/authentication.md as pasted (its url and ca_file pointed at the
// test's slapd, whose names and service account are the example's) and
// signs the directory's users in through the login page; with the
// directory gone, sign-in is 503 and /readyz says the directory does not
// answer.
func TestLDAPExampleAsPasted(t *testing.T) {
	srv := ldaptest.Start(t, "")
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "authentication.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(doc), "\n## Directory (LDAP)\n")
	if !ok {
		t.Fatal("docs/authentication.md has no Directory (LDAP) section")
	}
	m := regexp.MustCompile("(?s)```ini\n(.*?)```").FindStringSubmatch(after)
	if m == nil || !strings.Contains(m[1], "bind_dn = "+ldaptest.ServiceDN) || !strings.Contains(m[1], "base_dn = "+ldaptest.Base) {
		t.Fatalf("the OpenLDAP example no longer matches the test directory:\n%v", m)
	}
	example := regexp.MustCompile(`(?m)^url = .*$`).ReplaceAllString(m[1], "url = "+srv.TLSURL())
	example = regexp.MustCompile(`(?m)^ca_file = .*$`).ReplaceAllString(example, "ca_file = "+srv.CAFile)
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, "backups"), 0o700)
	ini := "[server]\nlisten = 127.0.0.1:0\nstate_dir = " + filepath.Join(dir, "state") + "\n[backups]\ndir = " + filepath.Join(dir, "backups") + "\n\n" + example
	addr, log := serveInProcess(t, dir, ini, map[string]string{
		"BACKUP_SECRET_KEY": strings.Repeat("ab", 32), "LDAP_PASSWORD": ldaptest.ServicePassword,
	})
	base := "http://" + addr
	readyz := func() (int, string) {
		resp, err := http.Get(base + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode, strings.TrimSpace(string(b))
	}
	if code, body := readyz(); code != 200 {
		t.Fatalf("/readyz: %d %s", code, body)
	}
	c := testkit.Client()
	testkit.SignIn(t, c, testkit.Login{Page: base + "/login", User: "alice", Password: ldaptest.Passwords["alice"]})
	resp, err := c.Get(base + "/api/backups")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("signed in, /api/backups: %d", resp.StatusCode)
	}
	if r := testkit.Post(t, testkit.Client(), testkit.Login{Page: base + "/login", User: "alice", Password: "wrong"}); r.StatusCode != http.StatusUnauthorized {
		t.Errorf("wrong password: %d", r.StatusCode)
	}

	srv.Kill()
	if r := testkit.Post(t, testkit.Client(), testkit.Login{Page: base + "/login", User: "bob", Password: ldaptest.Passwords["bob"]}); r.StatusCode != http.StatusServiceUnavailable || r.Header.Get("Retry-After") != "5" {
		t.Errorf("the directory gone: %d, Retry-After %q", r.StatusCode, r.Header.Get("Retry-After"))
	}
	code, body := readyz()
	if want := "not ready: the directory does not answer (" + srv.TLSURL() + ": unreachable)"; code != http.StatusServiceUnavailable || body != want {
		t.Errorf("/readyz: %d %q, want %q", code, body, want)
	}
	if !strings.Contains(log.String(), "auth: the directory did not answer; sign-in refused") {
		t.Errorf("no error line:\n%s", log)
	}
}

// TestLDAPGroupsFeedAccessRules: the directory's groups decide [access]
// rules for flask-login and basic users alike: alice (backup-readers)
// reads the API, bob (staff) is refused 403.
func TestLDAPGroupsFeedAccessRules(t *testing.T) {
	srv := ldaptest.Start(t, "")
	for _, typ := range []string{"flask-login", "basic"} {
		t.Run(typ, func(t *testing.T) {
			dir := t.TempDir()
			os.Mkdir(filepath.Join(dir, "backups"), 0o700)
			ini := "[server]\nlisten = 127.0.0.1:0\nstate_dir = " + filepath.Join(dir, "state") + "\n[backups]\ndir = " + filepath.Join(dir, "backups") +
				"\n[authentication]\ntype = " + typ + "\nusers = ldap\n[ldap]\nurl = " + srv.StartTLSURL() + "\nstart_tls = true\nca_file = " + srv.CAFile +
				"\nbind_dn = " + ldaptest.ServiceDN + "\nbind_password = ${LDAP_PASSWORD}\nbase_dn = " + ldaptest.Base +
				"\n[access]\nrule1 = GET ^/api/ allow group:backup-readers\nrule2 = * ^/api/ deny\n"
			addr, _ := serveInProcess(t, dir, ini, map[string]string{
				"BACKUP_SECRET_KEY": strings.Repeat("ab", 32), "LDAP_PASSWORD": ldaptest.ServicePassword,
			})
			base := "http://" + addr
			for _, tc := range []struct {
				user string
				want int
			}{{"alice", http.StatusOK}, {"bob", http.StatusForbidden}} {
				c := testkit.Client()
				req, _ := http.NewRequest("GET", base+"/api/backups", nil)
				if typ == "basic" {
					req.SetBasicAuth(tc.user, ldaptest.Passwords[tc.user])
				} else {
					testkit.SignIn(t, c, testkit.Login{Page: base + "/login", User: tc.user, Password: ldaptest.Passwords[tc.user]})
				}
				resp, err := c.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode != tc.want {
					t.Errorf("%s: %d, want %d", tc.user, resp.StatusCode, tc.want)
				}
			}
		})
	}
}

// ldapCommandConfig writes, in a new folder, a flask-login configuration
// with users = ldap on srv (second_factor optional, state in the folder)
// and more appended, and returns its path, the folder and the
// environment it needs.
func ldapCommandConfig(t *testing.T, srv *ldaptest.Server, more string) (path, dir, ini string, env map[string]string) {
	t.Helper()
	dir = t.TempDir()
	os.Mkdir(filepath.Join(dir, "backups"), 0o700)
	os.Mkdir(filepath.Join(dir, "state"), 0o700) // as the service makes it
	ini = "[server]\nlisten = 127.0.0.1:0\nstate_dir = " + filepath.Join(dir, "state") + "\n[backups]\ndir = " + filepath.Join(dir, "backups") +
		"\n[authentication]\ntype = flask-login\nusers = ldap\nsecond_factor = optional\n[ldap]\nurl = " + srv.StartTLSURL() + "\nstart_tls = true\nca_file = " + srv.CAFile +
		"\nbind_dn = " + ldaptest.ServiceDN + "\nbind_password = ${LDAP_PASSWORD}\nbase_dn = " + ldaptest.Base + "\n" + more
	path = filepath.Join(dir, "cli.ini")
	if err := os.WriteFile(path, []byte(ini), 0o600); err != nil {
		t.Fatal(err)
	}
	return path, dir, ini, map[string]string{"BACKUP_SECRET_KEY": testFactorSecret, "LDAP_PASSWORD": ldaptest.ServicePassword}
}

// TestLDAPUserAndTokenCommands: with -config naming users = ldap, the user
// and token commands look the name up in the directory (one entry, else
// an error that says so) and key what they keep by the directory's
// spelling of it; passwords stay the directory's (plain passwd and del are
// refused, saying why), and passwd -reset-factors removes the factors and
// tokens and leaves the password alone.
func TestLDAPUserAndTokenCommands(t *testing.T) {
	srv := ldaptest.Start(t, "")
	cfg, _, _, env := ldapCommandConfig(t, srv, "")
	run := func(stdin io.Reader, cmd func(*cli, []string) int, args ...string) (int, string, string) {
		t.Helper()
		c, out, errs := testCLI(context.Background(), "", env)
		if stdin != nil {
			c.stdin = stdin
		}
		code := cmd(c, args)
		return code, out.String(), errs.String()
	}
	user := func(args ...string) (int, string, string) { return run(nil, runUser, args...) }
	token := func(args ...string) (int, string, string) { return run(nil, runToken, args...) }

	// TOTP for ALICE: the directory's alice.
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	c, _, errs := testCLI(context.Background(), "", env)
	out := &uriWriter{t: t, w: w}
	c.stdin, c.stdout = r, out
	code := runUser(c, []string{"totp", "-config", cfg, "ALICE"})
	w.Close()
	r.Close()
	if code != exitOK || !strings.Contains(errs.String(), `the directory spells the user "alice"`) {
		t.Fatalf("totp ALICE: exit %d: %s", code, errs)
	}
	if code, stdout, stderr := user("factors", "-config", cfg, "alice"); code != exitOK || !strings.Contains(stdout, "totp: enrolled") {
		t.Fatalf("factors alice: %d %q %q", code, stdout, stderr)
	}
	if code, stdout, stderr := user("recovery-codes", "-config", cfg, "alice"); code != exitOK || len(strings.Fields(stdout)) != 10 {
		t.Fatalf("recovery-codes alice: %d %q %q", code, stdout, stderr)
	}
	for _, tc := range []struct{ name, want string }{
		{"carol", `no directory user "carol": no entry`},
		{"twin", `no directory user "twin": several entries`},
		{"a*", `no directory user "a*": no entry`},
	} {
		if code, _, stderr := user("factors", "-config", cfg, tc.name); code != exitError || !strings.Contains(stderr, tc.want) {
			t.Errorf("factors %s: %d %q", tc.name, code, stderr)
		}
		if code, _, stderr := token("add", "-config", cfg, tc.name); code != exitError || !strings.Contains(stderr, tc.want) {
			t.Errorf("token add %s: %d %q", tc.name, code, stderr)
		}
	}

	// Passwords are the directory's.
	if code, _, stderr := user("passwd", "-config", cfg, "alice"); code != exitError || !strings.Contains(stderr, "passwords are the directory's; change it there") {
		t.Errorf("passwd alice: %d %q", code, stderr)
	}
	if code, _, stderr := user("del", "-config", cfg, "alice"); code != exitError || !strings.Contains(stderr, "users are the directory's") {
		t.Errorf("del alice: %d %q", code, stderr)
	}

	// Tokens, keyed by the directory's name.
	code, secret, stderr := token("add", "-config", cfg, "-label", "nightly", "Alice")
	if code != exitOK || !strings.HasPrefix(strings.TrimSpace(secret), "bwt_") || !strings.Contains(stderr, `for user "alice"`) {
		t.Fatalf("token add Alice: %d %q %q", code, secret, stderr)
	}
	if code, stdout, _ := token("list", "-config", cfg, "ALICE"); code != exitOK || !strings.Contains(stdout, " alice ") || !strings.Contains(stdout, "nightly") {
		t.Fatalf("token list ALICE: %d %q", code, stdout)
	}
	code, _, stderr = token("add", "-config", cfg, "bob")
	if code != exitOK {
		t.Fatalf("token add bob: %d %q", code, stderr)
	}
	bobID := regexp.MustCompile(`added token (\S+)`).FindStringSubmatch(stderr)
	if bobID == nil {
		t.Fatalf("token add bob: %q", stderr)
	}
	if code, _, stderr := token("revoke", "-config", cfg, bobID[1]); code != exitOK || !strings.Contains(stderr, `of user "bob"`) {
		t.Errorf("token revoke: %d %q", code, stderr)
	}
	srv.Lock("uid=bob,ou=people," + ldaptest.Base)
	if code, _, stderr := token("add", "-config", cfg, "bob"); code != exitError || !strings.Contains(stderr, "disabled or locked") {
		t.Errorf("token add for a locked user: %d %q", code, stderr)
	}

	// passwd -reset-factors: factors and tokens gone, the password kept.
	code, _, stderr = user("passwd", "-config", cfg, "-reset-factors", "ALICE")
	if code != exitOK || !strings.Contains(stderr, `the password of "alice" is the directory's and was not changed`) ||
		!strings.Contains(stderr, `ended 1 token of user "alice"`) || !strings.Contains(stderr, `removed every second factor of user "alice"`) {
		t.Fatalf("passwd -reset-factors: %d %q", code, stderr)
	}
	if code, stdout, _ := user("factors", "-config", cfg, "alice"); code != exitOK || strings.TrimSpace(stdout) != "status: none" {
		t.Errorf("factors after the reset: %d %q", code, stdout)
	}
	if _, stdout, _ := token("list", "-config", cfg, "alice"); strings.Contains(stdout, "nightly") {
		t.Errorf("alice's token outlived passwd: %q", stdout)
	}
	for _, args := range [][]string{{"totp", "-config", cfg, "-file", cfg, "alice"}, {"passwd", "-config", cfg, "-file", cfg, "-reset-factors", "alice"}} {
		if code, _, stderr := user(args...); code != exitError || !strings.Contains(stderr, "has users = ldap: there is no user file") {
			t.Errorf("%s with -file and -config: %d %q", args[0], code, stderr)
		}
	}
	if code, _, stderr := token("add", "-config", cfg, "-file", cfg, "alice"); code != exitError || !strings.Contains(stderr, "has users = ldap: there is no user file") {
		t.Errorf("token add with -file and -config: %d %q", code, stderr)
	}
	// A user the directory no longer has can still have their factors
	// reset, under the name given.
	if code, _, stderr := user("factors", "-config", cfg, "-reset", "carol"); code != exitOK || !strings.Contains(stderr, `no directory user "carol"`) {
		t.Errorf("factors -reset carol: %d %q", code, stderr)
	}

	// The directory gone: an error naming it, nothing done.
	srv.Kill()
	if code, _, stderr := token("add", "-config", cfg, "alice"); code != exitError || !strings.Contains(stderr, "asking the directory") || !strings.Contains(stderr, "unreachable") {
		t.Errorf("token add with the directory gone: %d %q", code, stderr)
	}
}

// TestLDAPTokenGroups: a directory user's machine token, made with the
// token command, carries the directory's groups: [access] group rules
// admit alice's (backup-readers) and refuse bob's (403), as they do
// their sessions.
func TestLDAPTokenGroups(t *testing.T) {
	srv := ldaptest.Start(t, "")
	cfg, dir, ini, env := ldapCommandConfig(t, srv, "[access]\nrule1 = GET ^/api/ allow group:backup-readers\nrule2 = * ^/api/ deny\n")
	secrets := map[string]string{}
	for _, name := range []string{"alice", "bob"} {
		c, out, errs := testCLI(context.Background(), "", env)
		if code := runToken(c, []string{"add", "-config", cfg, name}); code != exitOK {
			t.Fatalf("token add %s: %s", name, errs)
		}
		secrets[name] = strings.TrimSpace(out.String())
	}
	addr, _ := serveInProcess(t, dir, ini, env)
	for name, want := range map[string]int{"alice": http.StatusOK, "bob": http.StatusForbidden} {
		req, _ := http.NewRequest("GET", "http://"+addr+"/api/backups", nil)
		req.Header.Set("Authorization", "Bearer "+secrets[name])
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("%s's token: %d, want %d", name, resp.StatusCode, want)
		}
	}
}
