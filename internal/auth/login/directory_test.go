package login

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
	"github.com/backupweb/backupweb/internal/auth/secondfactor"
	"github.com/backupweb/backupweb/internal/directory"
	"github.com/backupweb/backupweb/internal/refusal"
	"github.com/backupweb/backupweb/internal/testkit/ldaptest"
	"github.com/backupweb/backupweb/internal/tokens"
)

// newDirectoryHarness is a harness whose users are srv's (users = ldap,
// StartTLS), with second_factor mode.
func newDirectoryHarness(t *testing.T, srv *ldaptest.Server, mode SecondFactor) *harness {
	t.Helper()
	dir := t.TempDir()
	return newHarness(t, func(c *Config) {
		c.UsersFrom, c.UsersFile, c.UseBcrypt = UsersFromDirectory, "", false
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
	h := newDirectoryHarness(t, srv, SecondFactorOff)
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
			b := h.browser()
			r := b.login(tc.user, tc.pw, "/")
			if r.status != tc.status {
				t.Fatalf("login: %d, want %d: %s", r.status, tc.status, r.body)
			}
			u, ok := b.user()
			if ok != (tc.want != "") || u.Name != tc.want || !slices.Equal(u.Groups, tc.groups) {
				t.Fatalf("user = %+v, %v; want %s in %v", u, ok, tc.want, tc.groups)
			}
			if _, has := u.Attrs.Lookup(AttrGroups); has {
				t.Error("the groups stayed in the attributes")
			}
			if want := map[string]string{"alice": "alice@example.org", "bob": "bob@example.org"}[tc.want]; u.Attrs.Get(AttrEmail) != want {
				t.Errorf("e-mail %q, want %q", u.Attrs.Get(AttrEmail), want)
			}
		})
	}
	if !strings.Contains(h.logs.String(), "auth refused") {
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
	h := newDirectoryHarness(t, srv, SecondFactorOff)
	aliceDN := "uid=alice,ou=people," + ldaptest.Base
	alice := h.browser()
	alice.mustLoginWith("alice", "alice-password")
	if err := h.p.Ready(context.Background()); err != nil {
		t.Fatalf("Ready: %v", err)
	}

	srv.Pause()
	if s := alice.apiStatus(); s != http.StatusOK {
		t.Errorf("a signed-in request while the directory hangs: %d", s)
	}
	r := h.browser().login("bob", "bob-password", "/")
	if r.status != http.StatusServiceUnavailable || r.header.Get("Retry-After") == "" || !strings.Contains(r.body, "directory does not answer") {
		t.Errorf("sign-in while the directory hangs: %d %q", r.status, r.header.Get("Retry-After"))
	}
	if err := h.p.Ready(context.Background()); err == nil || !strings.Contains(err.Error(), "the directory does not answer") || !strings.Contains(err.Error(), "timeout") {
		t.Errorf("Ready while the directory hangs: %v", err)
	}
	if n := strings.Count(h.logs.String(), "auth: the directory did not answer"); n != 1 {
		t.Errorf("%d error lines for one failed sign-in", n)
	}
	srv.Resume()

	srv.SetPassword(aliceDN, "changed")
	if r := h.browser().login("alice", "alice-password", "/"); r.status != http.StatusUnauthorized {
		t.Errorf("the old password: %d", r.status)
	}
	srv.Modify("dn: cn=admins,ou=groups," + ldaptest.Base + "\nchangetype: modify\nadd: member\nmember: " + aliceDN + "\n")
	again := h.browser()
	again.mustLoginWith("alice", "changed")
	if u, _ := again.user(); !slices.Equal(u.Groups, []string{"admins", "backup-readers"}) {
		t.Errorf("groups at the next sign-in: %v", u.Groups)
	}
	if u, _ := alice.user(); !slices.Equal(u.Groups, []string{"backup-readers"}) {
		t.Errorf("the earlier session's groups: %v", u.Groups)
	}

	srv.Modify("dn: " + aliceDN + "\nchangetype: delete\n")
	if r := h.browser().login("alice", "changed", "/"); r.status != http.StatusUnauthorized {
		t.Errorf("a removed user: %d", r.status)
	}
	if err := h.p.Manager().DeleteUser(context.Background(), "alice"); err != nil {
		t.Fatal(err)
	}
	if s := alice.apiStatus(); s != http.StatusUnauthorized {
		t.Errorf("a revoked session: %d", s)
	}

	srv.Kill()
	if r := h.browser().login("bob", "bob-password", "/"); r.status != http.StatusServiceUnavailable || r.header.Get("Retry-After") == "" {
		t.Errorf("sign-in with the directory gone: %d", r.status)
	}
	if err := h.p.Ready(context.Background()); err == nil || !strings.Contains(err.Error(), "unreachable") {
		t.Errorf("Ready with the directory gone: %v", err)
	}
}

// TestDirectorySecondFactor: a directory user with a TOTP factor signs in
// with the password and then the code, keyed by the directory's name,
// and the session holds the groups read at the password step.
func TestDirectorySecondFactor(t *testing.T) {
	srv := ldaptest.Start(t, "")
	h := newDirectoryHarness(t, srv, SecondFactorOptional)
	h.enrol("alice")
	b := h.browser()
	if r := b.login("ALICE", "alice-password", "/"); r.status != http.StatusSeeOther || !strings.HasPrefix(r.header.Get("Location"), secondfactor.SecondFactorPath) {
		t.Fatalf("password step: %d %s", r.status, r.header.Get("Location"))
	}
	if _, ok := b.user(); ok {
		t.Fatal("signed in with the password alone")
	}
	if r := b.secondFactor(h.code(), "/"); r.status != http.StatusSeeOther {
		t.Fatalf("code: %d %s", r.status, r.body)
	}
	u, ok := b.user()
	if !ok || u.Name != "alice" || u.SecondFactor != "totp" || !slices.Equal(u.Groups, []string{"backup-readers"}) || u.Attrs.Get(AttrEmail) != "alice@example.org" {
		t.Fatalf("user = %+v, %v", u, ok)
	}
}

// mustLoginWith signs in with user and pw and fails the test otherwise.
func (b *browser) mustLoginWith(user, pw string) {
	b.t.Helper()
	if r := b.login(user, pw, "/"); r.status != http.StatusSeeOther {
		b.t.Fatalf("login %s: %d %s", user, r.status, r.body)
	}
}

// TestDirectoryTokensAndThrottling: a directory user's machine token
// admits them by their name, with the directory's groups; wrong passwords for one name, in any letter case, are counted
// together, and past max_user_failures the name gets 429 without the
// directory being asked.
func TestDirectoryTokensAndThrottling(t *testing.T) {
	srv := ldaptest.Start(t, "")
	h := newDirectoryHarness(t, srv, SecondFactorOff)
	secret, _, err := h.p.CreateToken("alice", "script", time.Hour, tokens.Scope{}, "test")
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest("GET", "/api/backups", nil)
	req.Header.Set("Authorization", "Bearer "+secret)
	if u, ok, err := h.p.Identify(req); err != nil || !ok || u.Name != "alice" || !slices.Equal(u.Groups, []string{"backup-readers"}) {
		t.Fatalf("token: %+v %v %v", u, ok, err)
	}

	for i, name := range []string{"bob", "BOB", "Bob", "bOb", "boB"} {
		if r := h.browser().login(name, "wrong", "/"); r.status != http.StatusUnauthorized {
			t.Fatalf("wrong password %d: %d", i, r.status)
		}
	}
	srv.Pause() // a name past its limit is refused before the directory is asked
	defer srv.Resume()
	if r := h.browser().login("bob", "bob-password", "/"); r.status != http.StatusTooManyRequests || r.header.Get("Retry-After") == "" {
		t.Fatalf("past the name's limit: %d", r.status)
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
	h := newDirectoryHarness(t, srv, SecondFactorOff)
	token := func(user string) func() (auth.User, bool, error) {
		secret, _, err := h.p.CreateToken(user, "script", 0, tokens.Scope{}, "test")
		if err != nil {
			t.Fatal(err)
		}
		return func() (auth.User, bool, error) {
			req := httptest.NewRequest("GET", "/api/backups", nil)
			req.Header.Set("Authorization", "Bearer "+secret)
			return h.p.Identify(req)
		}
	}
	alice, bob := token("alice"), token("bob")
	aliceDN, bobDN := "uid=alice,ou=people,"+ldaptest.Base, "uid=bob,ou=people,"+ldaptest.Base
	want := func(what string, id func() (auth.User, bool, error), name string, groups ...string) {
		t.Helper()
		u, ok, err := id()
		if err != nil || !ok || u.Name != name || !slices.Equal(u.Groups, groups) || u.Attrs.Get(AttrEmail) != name+"@example.org" {
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
	h.clock.Advance(DirectoryCheckTTL)
	refused("alice past it, the directory hanging", alice, http.StatusServiceUnavailable)
	srv.Resume()
	if n := strings.Count(h.logs.String(), "auth: the directory did not answer; user not admitted"); n != 1 {
		t.Errorf("%d error lines for one refused token", n)
	}

	srv.Modify("dn: cn=admins,ou=groups," + ldaptest.Base + "\nchangetype: modify\nadd: member\nmember: " + aliceDN + "\n")
	want("alice, the directory asked again", alice, "alice", "admins", "backup-readers")
	srv.Lock(aliceDN)
	srv.Modify("dn: " + bobDN + "\nchangetype: delete\n")
	want("alice locked, within the check's lifetime", alice, "alice", "admins", "backup-readers")
	if err := h.p.Reload(); err != nil { // SIGHUP: every answer forgotten
		t.Fatal(err)
	}
	refused("alice locked, after a reload", alice, http.StatusUnauthorized)
	h.clock.Advance(DirectoryCheckTTL)
	refused("alice locked", alice, http.StatusUnauthorized)
	refused("bob removed", bob, http.StatusUnauthorized)
	if !strings.Contains(h.logs.String(), "user=bob") {
		t.Error("the refusal does not name the token's user")
	}

	srv.Kill()
	refused("bob, the directory gone", bob, http.StatusServiceUnavailable)
}
