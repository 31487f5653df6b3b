package main

import (
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
