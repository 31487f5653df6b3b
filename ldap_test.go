package backupweb_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/backupweb/backupweb"
	"github.com/backupweb/backupweb/internal/testkit"
	"github.com/backupweb/backupweb/internal/testkit/ldaptest"
)

// TestNewProviderLDAP: the library's flask-login with users = ldap, its
// [ldap] keys read from a file with ReadLDAP, signs the directory's users
// in (as the directory spells them, with its groups); a wrong password is
// refused; problems of the [ldap] keys are errors naming the key; a
// directory gone makes sign-in 503.
func TestNewProviderLDAP(t *testing.T) {
	srv := ldaptest.Start(t, "")
	dir := t.TempDir()
	path := writeFile(t, dir, "backupweb.ini", "[authentication]\ntype = flask-login\nusers = ldap\n\n[ldap]\nurl = "+srv.TLSURL()+
		"\nca_file = "+srv.CAFile+"\nbind_dn = "+ldaptest.ServiceDN+"\nbind_password = ${LDAP_PASSWORD}\nbase_dn = "+ldaptest.Base+"\n")
	cfg, err := backupweb.ReadConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	keys, err := backupweb.ReadLDAP(path)
	if err != nil || keys["bind_password"] != "${LDAP_PASSWORD}" {
		t.Fatalf("ReadLDAP: %v %v", keys, err)
	}
	opts := backupweb.Options{SecretKey: testKey, StateDir: dir + "/state", LDAP: keys,
		LookupEnv: lookup(map[string]string{"LDAP_PASSWORD": ldaptest.ServicePassword})}
	p, err := backupweb.NewProvider("", cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	mux := http.NewServeMux()
	p.Mount(mux)
	mux.Handle("GET /{$}", p.RequireAuth(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, _ := backupweb.CurrentUser(r)
		io.WriteString(w, u.Username+" "+strings.Join(u.Groups, ","))
	})))
	ts := httptest.NewServer(p.Handler(mux))
	t.Cleanup(ts.Close)

	c := testkit.Client()
	testkit.SignIn(t, c, testkit.Login{Page: ts.URL + "/login", User: "ALICE", Password: ldaptest.Passwords["alice"]})
	resp, err := c.Get(ts.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != "alice backup-readers" {
		t.Fatalf("signed in: %d %q", resp.StatusCode, body)
	}
	if r := testkit.Post(t, testkit.Client(), testkit.Login{Page: ts.URL + "/login", User: "alice", Password: "wrong"}); r.StatusCode != http.StatusUnauthorized {
		t.Errorf("wrong password: %d", r.StatusCode)
	}

	bad := map[string]string{}
	for k, v := range keys {
		bad[k] = v
	}
	bad["url"] = "http://ldap.example.org"
	_, err = backupweb.NewProvider("", cfg, backupweb.Options{SecretKey: testKey, StateDir: dir + "/state", LDAP: bad, LookupEnv: opts.LookupEnv})
	var ce *backupweb.ConfigError
	if !errors.As(err, &ce) || ce.Section != "ldap" || ce.Key != "url" || !strings.Contains(err.Error(), "must start with ldaps:// or ldap://") {
		t.Errorf("a bad [ldap] url: %v", err)
	}
	_, err = backupweb.NewProvider("", cfg, backupweb.Options{SecretKey: testKey, StateDir: dir + "/state"})
	if !errors.As(err, &ce) || ce.Key != "users" || !strings.Contains(err.Error(), "Options.LDAP is empty") {
		t.Errorf("users = ldap without Options.LDAP: %v", err)
	}

	srv.Kill()
	if r := testkit.Post(t, testkit.Client(), testkit.Login{Page: ts.URL + "/login", User: "bob", Password: ldaptest.Passwords["bob"]}); r.StatusCode != http.StatusServiceUnavailable || r.Header.Get("Retry-After") == "" {
		t.Errorf("the directory gone: %d %q", r.StatusCode, r.Header.Get("Retry-After"))
	}
}
