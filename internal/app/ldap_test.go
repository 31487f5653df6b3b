package app

import (
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/testkit/certtest"
	"github.com/backupweb/backupweb/internal/testkit/ldaptest"
)

// TestCheckLDAP: check-config judges users = ldap and [ldap] as serve
// would, naming the key of each problem, without connecting.
func TestCheckLDAP(t *testing.T) {
	dir := t.TempDir()
	ca := filepath.Join(dir, "ca.pem")
	notCA := filepath.Join(dir, "not-ca.pem")
	writeFile(t, ca, string(certtest.NewCA(t).PEM))
	writeFile(t, notCA, "not a certificate\n")
	good := "url = ldaps://ldap.example.org\nbind_dn = cn=svc,dc=example,dc=org\nbind_password = ${LDAP_PASSWORD}\nbase_dn = dc=example,dc=org\nca_file = " + ca + "\n"
	for _, tc := range []struct {
		name, auth, ldap string
		want             string // "" when the configuration is good
	}{
		{"good", "", good, ""},
		{"active directory", "", good + "preset = active-directory\n", ""},
		{"starttls", "", strings.Replace(good, "ldaps://ldap.example.org", "ldap://ldap.example.org:389", 1) + "start_tls = true\n", ""},
		{"no section", "", "", "[authentication] users: is ldap, but the file has no [ldap] section"},
		{"unknown users", "#", good, "[authentication] users: unknown value \"nis\""},
		{"bad url", "", strings.Replace(good, "ldaps://ldap.example.org", "http://ldap.example.org", 1), "[ldap] url: must start with ldaps:// or ldap://"},
		{"plain ldap", "", strings.Replace(good, "ldaps://", "ldap://", 1), "[ldap] url: is ldap:// without start_tls"},
		{"filter without username", "", good + "user_filter = (objectClass=person)\n", "[ldap] user_filter: must contain {username}"},
		{"unreadable ca", "", strings.Replace(good, ca, filepath.Join(dir, "missing.pem"), 1), "[ldap] ca_file: cannot read the CA file"},
		{"not a ca", "", strings.Replace(good, ca, notCA, 1), "[ldap] ca_file: " + notCA + " holds no PEM certificate"},
		{"no bind dn", "", strings.Replace(good, "bind_dn = cn=svc,dc=example,dc=org\n", "", 1), "[ldap] bind_dn: missing required key"},
		{"bad timeout", "", good + "timeout = 0s\n", "[ldap] timeout: must be above zero"},
		{"users_file too", "users_file = " + filepath.Join(dir, "users") + "\n", good, "[authentication] users_file: is not read with users = ldap"},
		{"groups_file too", "groups_file = " + filepath.Join(dir, "groups") + "\n", good, "[authentication] groups_file: cannot go with users = ldap"},
		{"near miss", "", good + "bind_passwd = x\n", "did you mean bind_password"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "backupweb.ini")
			text := "[server]\nlisten = 127.0.0.1:0\nstate_dir = " + filepath.Join(dir, "state") + "\n[backups]\ndir = " + dir +
				"\n[authentication]\ntype = flask-login\nusers = ldap\n" + tc.auth
			if tc.auth == "#" {
				text = strings.Replace(text, "users = ldap\n#", "users = nis\n", 1)
			}
			if tc.ldap != "" {
				text += "[ldap]\n" + tc.ldap
			}
			writeFile(t, path, text)
			a := Check(path, Options{LookupEnv: ldapEnv})
			report := reportText(a)
			switch {
			case tc.want == "" && a.Config.Report.HasErrors():
				t.Fatalf("refused:\n%s", report)
			case tc.want != "" && !strings.Contains(report, tc.want):
				t.Fatalf("the report does not say %q:\n%s", tc.want, report)
			case strings.Contains(report, "a-value-for-ldap"):
				t.Fatalf("the report shows the password:\n%s", report)
			}
		})
	}
}

// TestOpenLDAP: serve's configuration with users = ldap builds a provider
// that signs the directory's users in.
func TestOpenLDAP(t *testing.T) {
	srv := ldaptest.Start(t, "")
	dir := t.TempDir()
	path := filepath.Join(dir, "backupweb.ini")
	writeFile(t, path, "[server]\nlisten = 127.0.0.1:0\nstate_dir = "+filepath.Join(dir, "state")+"\n[backups]\ndir = "+dir+
		"\n[authentication]\ntype = flask-login\nusers = ldap\n[ldap]\nurl = "+srv.TLSURL()+"\nca_file = "+srv.CAFile+
		"\nbind_dn = "+ldaptest.ServiceDN+"\nbind_password = ${LDAP_PASSWORD}\nbase_dn = "+ldaptest.Base+"\n")
	env := func(k string) (string, bool) {
		if k == "LDAP_PASSWORD" {
			return ldaptest.ServicePassword, true
		}
		return ldapEnv(k)
	}
	a := Open(path, Options{LookupEnv: env})
	if a.Provider == nil {
		t.Fatalf("refused: %v", a.Config.Report.Err())
	}
	defer a.Provider.(io.Closer).Close()
	if err := a.Provider.(auth.Checker).Ready(context.Background()); err != nil {
		t.Fatalf("Ready: %v", err)
	}
}

// ldapEnv is the environment of the tests: the secret key and the
// service account's password.
func ldapEnv(k string) (string, bool) {
	switch k {
	case SecretEnv:
		return strings.Repeat("ab", 32), true
	case "LDAP_PASSWORD":
		return "a-value-for-ldap", true
	}
	return "", false
}

// TestReloadLDAP: a changed [ldap] key keeps its running value until a
// restart, and the reload's error line names it.
func TestReloadLDAP(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "backupweb.ini")
	conf := func(url string) string {
		return "[server]\nlisten = 127.0.0.1:0\nstate_dir = " + filepath.Join(dir, "state") + "\n[backups]\ndir = " + dir +
			"\n[authentication]\ntype = flask-login\nusers = ldap\n[ldap]\nurl = " + url +
			"\nbind_dn = cn=svc,dc=example,dc=org\nbind_password = pw\nbase_dn = dc=example,dc=org\n"
	}
	writeFile(t, path, conf("ldaps://ldap.example.org"))
	buf, l := openLive(t, path)
	writeFile(t, path, conf("ldaps://ldap2.example.org"))
	if err := l.Reload(); err != nil {
		t.Fatalf("reload: %v\n%s", err, buf)
	}
	if line := restartLine(buf.String()); !strings.Contains(line, "ldap.url") {
		t.Fatalf("no restart line names ldap.url:\n%s", buf)
	}
}
