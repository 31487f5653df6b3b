package login_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/auth/login"
	"github.com/backupweb/backupweb/internal/auth/secondfactor"
	"github.com/backupweb/backupweb/internal/directory"
	"github.com/backupweb/backupweb/internal/refusal"
	"github.com/backupweb/backupweb/internal/testkit/ldaptest"
	"github.com/backupweb/backupweb/internal/testkit/logintest"
	"github.com/backupweb/backupweb/internal/tokens"
)

// newDirectoryHarness is a harness whose users are srv's (users = ldap,
// StartTLS), with second_factor mode.
func newDirectoryHarness(t *testing.T, srv *ldaptest.Server, mode login.SecondFactor) *logintest.Harness {
	t.Helper()
	dir := t.TempDir()
	return logintest.New(t, func(c *login.Config) {
		c.UsersFrom, c.UsersFile, c.UseBcrypt = login.UsersFromDirectory, "", false
		c.SecondFactor = mode
		c.FactorsFile, c.TokensFile = filepath.Join(dir, "factors"), filepath.Join(dir, "tokens")
		c.Directory = directory.Config{
			URL: srv.StartTLSURL(), StartTLS: true, CAFile: srv.CAFile,
			BindDN: ldaptest.ServiceDN, BindPassword: ldaptest.ServicePassword,
			BaseDN: ldaptest.Base, Timeout: 300 * time.Millisecond,
		}
	})
}

// TestDirectorySignIn: the directory's users sign in with its passwords,
// their groups ride in the session, a wrong or empty password and a name
// that would widen the search are refused alike, and the sign-in keys
// the user by the directory's spelling of the name.
func TestDirectorySignIn(t *testing.T) {
	srv := ldaptest.Start(t, "")
	h := newDirectoryHarness(t, srv, login.SecondFactorOff)
	for _, tc := range []struct {
		name, user, pw string
		status         int
		want           string   // the session's user
		groups         []string // its groups
	}{
		{"alice", "alice", "alice-password", http.StatusSeeOther, "alice", []string{"backup-readers"}},
		{"letter case", "Alice", "alice-password", http.StatusSeeOther, "alice", []string{"backup-readers"}},
		{"bob", "bob", "bob-password", http.StatusSeeOther, "bob", []string{"staff"}},
		{"wrong password", "alice", "bob-password", http.StatusUnauthorized, "", nil},
		{"empty password", "alice", "", http.StatusUnauthorized, "", nil},
		{"unknown", "carol", "alice-password", http.StatusUnauthorized, "", nil},
		{"two entries", "twin", "twin-password", http.StatusUnauthorized, "", nil},
		{"star", "*", "alice-password", http.StatusUnauthorized, "", nil},
		{"filter injection", "alice)(uid=*", "alice-password", http.StatusUnauthorized, "", nil},
		{"backslash", `alic\65`, "alice-password", http.StatusUnauthorized, "", nil},
		{"NUL", "alice\x00", "alice-password", http.StatusUnauthorized, "", nil},
		{"not UTF-8", "alic\xe9", "alice-password", http.StatusUnauthorized, "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := h.Browser()
			r := b.Login(tc.user, tc.pw, "/")
			if r.Status != tc.status {
				t.Fatalf("login: %d, want %d: %s", r.Status, tc.status, r.Body)
			}
			u, ok := b.User()
			if ok != (tc.want != "") || u.Name != tc.want || !slices.Equal(u.Groups, tc.groups) {
				t.Fatalf("user = %+v, %v; want %s in %v", u, ok, tc.want, tc.groups)
			}
			if _, has := u.Attrs.Lookup(login.AttrGroups); has {
				t.Error("the groups stayed in the attributes")
			}
			if want := map[string]string{"alice": "alice@example.org", "bob": "bob@example.org"}[tc.want]; u.Attrs.Get(login.AttrEmail) != want {
				t.Errorf("e-mail %q, want %q", u.Attrs.Get(login.AttrEmail), want)
			}
		})
	}
	if !strings.Contains(h.Logs.String(), "auth refused") {
		t.Error("no auth refused line")
	}
}

// TestDirectoryChangesAndOutage: a password or group changed in the
// directory is seen at the next sign-in, a signed-in request never asks
// the directory (it answers while the directory hangs), a directory that
// hangs or is gone makes sign-ins 503 with Retry-After and one error line
// and /readyz not ready, never a fallback; a user removed from the
// directory cannot sign in again, and ending the user's sessions ends
// what they hold.
func TestDirectoryChangesAndOutage(t *testing.T) {
	srv := ldaptest.Start(t, "")
	h := newDirectoryHarness(t, srv, login.SecondFactorOff)
	aliceDN := "uid=alice,ou=people," + ldaptest.Base
	alice := h.Browser()
	mustLoginWith(alice, "alice", "alice-password")
	if err := h.P.Ready(context.Background()); err != nil {
		t.Fatalf("Ready: %v", err)
	}

	srv.Pause()
	if s := alice.APIStatus(); s != http.StatusOK {
		t.Errorf("a signed-in request while the directory hangs: %d", s)
	}
	r := h.Browser().Login("bob", "bob-password", "/")
	if r.Status != http.StatusServiceUnavailable || r.Header.Get("Retry-After") == "" || !strings.Contains(r.Body, "directory does not answer") {
		t.Errorf("sign-in while the directory hangs: %d %q", r.Status, r.Header.Get("Retry-After"))
	}
	if err := h.P.Ready(context.Background()); err == nil || !strings.Contains(err.Error(), "the directory does not answer") || !strings.Contains(err.Error(), "timeout") {
		t.Errorf("Ready while the directory hangs: %v", err)
	}
	if n := strings.Count(h.Logs.String(), "auth: the directory did not answer"); n != 1 {
		t.Errorf("%d error lines for one failed sign-in", n)
	}
	srv.Resume()

	srv.SetPassword(aliceDN, "changed")
	if r := h.Browser().Login("alice", "alice-password", "/"); r.Status != http.StatusUnauthorized {
		t.Errorf("the old password: %d", r.Status)
	}
	srv.Modify("dn: cn=admins,ou=groups," + ldaptest.Base + "\nchangetype: modify\nadd: member\nmember: " + aliceDN + "\n")
	again := h.Browser()
	mustLoginWith(again, "alice", "changed")
	if u, _ := again.User(); !slices.Equal(u.Groups, []string{"admins", "backup-readers"}) {
		t.Errorf("groups at the next sign-in: %v", u.Groups)
	}
	if u, _ := alice.User(); !slices.Equal(u.Groups, []string{"backup-readers"}) {
		t.Errorf("the earlier session's groups: %v", u.Groups)
	}

	srv.Modify("dn: " + aliceDN + "\nchangetype: delete\n")
	if r := h.Browser().Login("alice", "changed", "/"); r.Status != http.StatusUnauthorized {
		t.Errorf("a removed user: %d", r.Status)
	}
	if err := h.P.Manager().DeleteUser(context.Background(), "alice"); err != nil {
		t.Fatal(err)
	}
	if s := alice.APIStatus(); s != http.StatusUnauthorized {
		t.Errorf("a revoked session: %d", s)
	}

	srv.Kill()
	if r := h.Browser().Login("bob", "bob-password", "/"); r.Status != http.StatusServiceUnavailable || r.Header.Get("Retry-After") == "" {
		t.Errorf("sign-in with the directory gone: %d", r.Status)
	}
	if err := h.P.Ready(context.Background()); err == nil || !strings.Contains(err.Error(), "unreachable") {
		t.Errorf("Ready with the directory gone: %v", err)
	}
}

// TestDirectorySecondFactor: a directory user with a TOTP factor signs in
// with the password and then the code, keyed by the directory's name,
// and the session holds the groups read at the password step.
func TestDirectorySecondFactor(t *testing.T) {
	srv := ldaptest.Start(t, "")
	h := newDirectoryHarness(t, srv, login.SecondFactorOptional)
	h.Enrol("alice")
	b := h.Browser()
	if r := b.Login("ALICE", "alice-password", "/"); r.Status != http.StatusSeeOther || !strings.HasPrefix(r.Header.Get("Location"), secondfactor.SecondFactorPath) {
		t.Fatalf("password step: %d %s", r.Status, r.Header.Get("Location"))
	}
	if _, ok := b.User(); ok {
		t.Fatal("signed in with the password alone")
	}
	if r := b.SecondFactor(h.Code(), "/"); r.Status != http.StatusSeeOther {
		t.Fatalf("code: %d %s", r.Status, r.Body)
	}
	u, ok := b.User()
	if !ok || u.Name != "alice" || u.SecondFactor != "totp" || !slices.Equal(u.Groups, []string{"backup-readers"}) || u.Attrs.Get(login.AttrEmail) != "alice@example.org" {
		t.Fatalf("user = %+v, %v", u, ok)
	}
}

// mustLoginWith signs in with user and pw and fails the test otherwise.
func mustLoginWith(b *logintest.Browser, user, pw string) {
	b.T.Helper()
	if r := b.Login(user, pw, "/"); r.Status != http.StatusSeeOther {
		b.T.Fatalf("login %s: %d %s", user, r.Status, r.Body)
	}
}

// TestDirectoryTokensAndThrottling: a directory user's machine token
// admits them by their name, with the directory's groups; wrong passwords for one name, in any letter case, are counted
// together, and past max_user_failures the name gets 429 without the
// directory being asked.
func TestDirectoryTokensAndThrottling(t *testing.T) {
	srv := ldaptest.Start(t, "")
	h := newDirectoryHarness(t, srv, login.SecondFactorOff)
	secret, _, err := h.P.CreateToken("alice", "script", time.Hour, tokens.Scope{}, "test")
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest("GET", "/api/backups", nil)
	req.Header.Set("Authorization", "Bearer "+secret)
	if u, ok, err := h.P.Identify(req); err != nil || !ok || u.Name != "alice" || !slices.Equal(u.Groups, []string{"backup-readers"}) {
		t.Fatalf("token: %+v %v %v", u, ok, err)
	}

	for i, name := range []string{"bob", "BOB", "Bob", "bOb", "boB"} {
		if r := h.Browser().Login(name, "wrong", "/"); r.Status != http.StatusUnauthorized {
			t.Fatalf("wrong password %d: %d", i, r.Status)
		}
	}
	srv.Pause() // a name past its limit is refused before the directory is asked
	defer srv.Resume()
	if r := h.Browser().Login("bob", "bob-password", "/"); r.Status != http.StatusTooManyRequests || r.Header.Get("Retry-After") == "" {
		t.Fatalf("past the name's limit: %d", r.Status)
	}
}

// TestDirectoryTokenChecks: a directory user's machine token carries the
// groups the directory gives, read at most once per DirectoryCheckTTL (a
// token request within it does not ask the directory: it is admitted
// while the directory hangs); past it the directory is asked again: a
// group change is seen, a directory that hangs or is gone is a 503 with
// Retry-After (never a "yes"), and a user locked or removed there has
// their tokens refused as unknown ones (401, Bearer challenge); a reload
// forgets every answer at once.
func TestDirectoryTokenChecks(t *testing.T) {
	srv := ldaptest.Start(t, "")
	h := newDirectoryHarness(t, srv, login.SecondFactorOff)
	token := func(user string) func() (auth.User, bool, error) {
		secret, _, err := h.P.CreateToken(user, "script", 0, tokens.Scope{}, "test")
		if err != nil {
			t.Fatal(err)
		}
		return func() (auth.User, bool, error) {
			req := httptest.NewRequest("GET", "/api/backups", nil)
			req.Header.Set("Authorization", "Bearer "+secret)
			return h.P.Identify(req)
		}
	}
	alice, bob := token("alice"), token("bob")
	aliceDN, bobDN := "uid=alice,ou=people,"+ldaptest.Base, "uid=bob,ou=people,"+ldaptest.Base
	want := func(what string, id func() (auth.User, bool, error), name string, groups ...string) {
		t.Helper()
		u, ok, err := id()
		if err != nil || !ok || u.Name != name || !slices.Equal(u.Groups, groups) || u.Attrs.Get(login.AttrEmail) != name+"@example.org" {
			t.Fatalf("%s: %+v, %v, %v; want %s in %v", what, u, ok, err, name, groups)
		}
	}
	refused := func(what string, id func() (auth.User, bool, error), status int) {
		t.Helper()
		u, ok, err := id()
		rp := refusal.ReplyTo(err)
		if ok || err == nil || rp.Status != status || status == http.StatusServiceUnavailable && rp.RetryAfter <= 0 ||
			status == http.StatusUnauthorized && !strings.Contains(rp.Challenge, "invalid_token") {
			t.Fatalf("%s: %+v, %v, %v (%d, Retry-After %d); want %d", what, u, ok, err, rp.Status, rp.RetryAfter, status)
		}
	}
	want("alice", alice, "alice", "backup-readers")
	want("bob", bob, "bob", "staff")

	srv.Pause()
	want("alice within the check's lifetime, the directory hanging", alice, "alice", "backup-readers")
	h.Clock.Advance(login.DirectoryCheckTTL)
	refused("alice past it, the directory hanging", alice, http.StatusServiceUnavailable)
	srv.Resume()
	if n := strings.Count(h.Logs.String(), "auth: the directory did not answer; user not admitted"); n != 1 {
		t.Errorf("%d error lines for one refused token", n)
	}

	srv.Modify("dn: cn=admins,ou=groups," + ldaptest.Base + "\nchangetype: modify\nadd: member\nmember: " + aliceDN + "\n")
	want("alice, the directory asked again", alice, "alice", "admins", "backup-readers")
	srv.Lock(aliceDN)
	srv.Modify("dn: " + bobDN + "\nchangetype: delete\n")
	want("alice locked, within the check's lifetime", alice, "alice", "admins", "backup-readers")
	if err := h.P.Reload(); err != nil { // SIGHUP: every answer forgotten
		t.Fatal(err)
	}
	refused("alice locked, after a reload", alice, http.StatusUnauthorized)
	h.Clock.Advance(login.DirectoryCheckTTL)
	refused("alice locked", alice, http.StatusUnauthorized)
	refused("bob removed", bob, http.StatusUnauthorized)
	if !strings.Contains(h.Logs.String(), "user=bob") {
		t.Error("the refusal does not name the token's user")
	}

	srv.Kill()
	refused("bob, the directory gone", bob, http.StatusServiceUnavailable)
}
