package directory

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-ldap/ldap/v3"

	"github.com/backupweb/backupweb/internal/refusal"
	"github.com/backupweb/backupweb/internal/testkit/ldaptest"
)

// open returns a Directory on srv over StartTLS, with cfg's other fields.
func open(t *testing.T, srv *ldaptest.Server, mod func(*Config)) *Directory {
	t.Helper()
	cfg := Config{
		URL: srv.StartTLSURL(), StartTLS: true, CAFile: srv.CAFile,
		BindDN: ldaptest.ServiceDN, BindPassword: ldaptest.ServicePassword,
		BaseDN: ldaptest.Base, Timeout: time.Second,
	}
	if mod != nil {
		mod(&cfg)
	}
	d, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

func TestSignIn(t *testing.T) {
	srv := ldaptest.Start(t, "")
	for _, tls := range []struct {
		name string
		mod  func(*Config)
	}{
		{"starttls", nil},
		{"ldaps", func(c *Config) { c.URL, c.StartTLS = srv.TLSURL(), false }},
	} {
		d := open(t, srv, tls.mod)
		for _, tc := range []struct {
			name, user, pw string
			ok             bool
			want           Entry
		}{
			{"right password", "alice", "alice-password", true, Entry{Name: "alice", DN: "uid=alice,ou=people," + ldaptest.Base, Email: "alice@example.org", Groups: []string{"backup-readers"}}},
			{"other letter case is the directory's name", "ALICE", "alice-password", true, Entry{Name: "alice", DN: "uid=alice,ou=people," + ldaptest.Base, Email: "alice@example.org", Groups: []string{"backup-readers"}}},
			{"group with a group in it", "bob", "bob-password", true, Entry{Name: "bob", DN: "uid=bob,ou=people," + ldaptest.Base, Email: "bob@example.org", Groups: []string{"staff"}}},
			{"wrong password", "alice", "bob-password", false, Entry{}},
			{"empty password", "alice", "", false, Entry{}},
			{"empty name", "", "alice-password", false, Entry{}},
			{"unknown name", "carol", "alice-password", false, Entry{}},
			{"two entries for the name", "twin", "twin-password", false, Entry{}},
			{"another user's password", "bob", "alice-password", false, Entry{}},
		} {
			t.Run(tls.name+"/"+tc.name, func(t *testing.T) {
				e, ok, err := d.SignIn(context.Background(), tc.user, []byte(tc.pw))
				if err != nil {
					t.Fatal(err)
				}
				if ok != tc.ok || e.Name != tc.want.Name || e.DN != tc.want.DN || e.Email != tc.want.Email || !slices.Equal(e.Groups, tc.want.Groups) {
					t.Fatalf("SignIn(%q) = %+v, %v; want %+v, %v", tc.user, e, ok, tc.want, tc.ok)
				}
			})
		}
	}
}

// TestInjection gives names that would widen an unescaped filter: each
// must find nothing, with alice's password, though an unescaped
// (uid=NAME) would match alice (or everyone).
func TestInjection(t *testing.T) {
	srv := ldaptest.Start(t, "")
	d := open(t, srv, nil)
	for _, name := range []string{
		"*", "a*", "*e", "al*ce", "alice)(uid=*", "*)(|(uid=*", "alice)", "(alice", `alice\`, `\2a`, `al\69ce`,
		"alice\x00", "alice\x00)(uid=*", "\x00", "alic\xe9", "\xff\xfe*", "alice*)(objectClass=*",
	} {
		t.Run(name, func(t *testing.T) {
			e, ok, err := d.SignIn(context.Background(), name, []byte("alice-password"))
			if err != nil || ok {
				t.Fatalf("SignIn(%q) = %+v, %v, %v; want a refusal", name, e, ok, err)
			}
		})
	}
	// The escaping is what stops them: the same filter filled without it
	// matches alice.
	if got := fill("(uid={username})", "al*", ""); got != `(uid=al\2a)` {
		t.Fatalf("fill = %s", got)
	}
}

// TestDirectoryChanges: a changed password and a changed group are seen
// at the next sign-in, a removed user cannot sign in again.
func TestDirectoryChanges(t *testing.T) {
	srv := ldaptest.Start(t, "")
	d := open(t, srv, nil)
	ctx := context.Background()
	aliceDN := "uid=alice,ou=people," + ldaptest.Base
	signIn := func(name, pw string) (Entry, bool) {
		t.Helper()
		e, ok, err := d.SignIn(ctx, name, []byte(pw))
		if err != nil {
			t.Fatal(err)
		}
		return e, ok
	}
	if _, ok := signIn("alice", "alice-password"); !ok {
		t.Fatal("alice refused before the change")
	}
	srv.SetPassword(aliceDN, "new-password")
	if _, ok := signIn("alice", "alice-password"); ok {
		t.Fatal("the old password still signs in")
	}
	if _, ok := signIn("alice", "new-password"); !ok {
		t.Fatal("the new password is refused")
	}
	srv.Modify("dn: cn=admins,ou=groups," + ldaptest.Base + "\nchangetype: modify\nadd: member\nmember: " + aliceDN + "\n")
	if e, _ := signIn("alice", "new-password"); !slices.Equal(e.Groups, []string{"admins", "backup-readers"}) {
		t.Fatalf("groups after the change = %v", e.Groups)
	}
	srv.Modify("dn: " + aliceDN + "\nchangetype: delete\n")
	if _, ok := signIn("alice", "new-password"); ok {
		t.Fatal("a removed user signs in")
	}
}

// TestFailClosed: a directory that hangs, is gone, or cannot be verified
// gives an Unavailable error, never a verdict, within about the timeout.
func TestFailClosed(t *testing.T) {
	srv := ldaptest.Start(t, "")
	ctx := context.Background()
	d := open(t, srv, func(c *Config) { c.Timeout = 300 * time.Millisecond })
	if _, ok, err := d.SignIn(ctx, "alice", []byte("alice-password")); err != nil || !ok {
		t.Fatalf("before: %v %v", ok, err)
	}
	unavailable := func(t *testing.T, d *Directory, why string) {
		t.Helper()
		for _, pw := range []string{"alice-password", "wrong"} {
			start := time.Now()
			_, ok, err := d.SignIn(ctx, "alice", []byte(pw))
			var de *Error
			if ok || !errors.As(err, &de) || !refusal.IsUnavailable(err) || refusal.ReplyTo(err).Status != 503 {
				t.Fatalf("SignIn = %v, %v; want an Unavailable *Error", ok, err)
			}
			if de.Why != why {
				t.Errorf("Why = %q (%v); want %q", de.Why, err, why)
			}
			if el := time.Since(start); el > 5*time.Second {
				t.Errorf("took %s", el)
			}
			if err := d.Ready(ctx); err == nil {
				t.Error("Ready = nil")
			}
		}
	}
	t.Run("paused", func(t *testing.T) {
		srv.Pause()
		defer srv.Resume()
		unavailable(t, d, "timeout")
	})
	if _, ok, err := d.SignIn(ctx, "alice", []byte("alice-password")); err != nil || !ok {
		t.Fatalf("after resuming: %v %v", ok, err)
	}
	t.Run("killed", func(t *testing.T) {
		srv.Kill()
		unavailable(t, d, "unreachable")
		srv.Start()
	})
	if _, ok, err := d.SignIn(ctx, "alice", []byte("alice-password")); err != nil || !ok {
		t.Fatalf("after restarting: %v %v", ok, err)
	}
	t.Run("unknown CA", func(t *testing.T) {
		d := open(t, srv, func(c *Config) { c.CAFile = "" })
		unavailable(t, d, "tls")
	})
	t.Run("ldaps with unknown CA", func(t *testing.T) {
		d := open(t, srv, func(c *Config) { c.URL, c.StartTLS, c.CAFile = srv.TLSURL(), false, "" })
		unavailable(t, d, "tls")
	})
	t.Run("nothing listening", func(t *testing.T) {
		d := open(t, srv, func(c *Config) { c.URL = "ldap://127.0.0.2:" + srv.StartTLSURL()[len("ldap://localhost:"):] })
		unavailable(t, d, "unreachable")
	})
	t.Run("service account refused", func(t *testing.T) {
		d := open(t, srv, func(c *Config) { c.BindPassword = "wrong" })
		unavailable(t, d, "service account refused")
	})
}

// TestInChainOnSlapd: slapd has no in-chain matching rule, so the Active
// Directory preset's groups filter, sent to it, must not give more than
// it means: either no group or an error (a 503), never every group.
func TestInChainOnSlapd(t *testing.T) {
	srv := ldaptest.Start(t, "")
	d := open(t, srv, func(c *Config) {
		c.Preset = PresetActiveDirectory
		c.UserFilter = "(&(objectClass=person)(uid={username}))" // slapd's people are not AD users
	})
	e, ok, err := d.SignIn(context.Background(), "alice", []byte("alice-password"))
	t.Logf("the in-chain filter on slapd: %v, %v, %v", e.Groups, ok, err)
	switch {
	case err != nil:
		if !refusal.IsUnavailable(err) {
			t.Fatalf("SignIn: %v", err)
		}
	case !ok:
		t.Fatal("alice refused")
	case len(e.Groups) != 0:
		t.Fatalf("groups %v from a filter the server cannot evaluate", e.Groups)
	}
}

// TestGroupInGroup: with the OpenLDAP preset, a user's groups are the
// groups that list the user: alice is in backup-readers, which is in
// staff, and staff is not one of alice's groups (groups inside groups are
// Active Directory's in-chain rule's to follow).
func TestGroupInGroup(t *testing.T) {
	srv := ldaptest.Start(t, "")
	d := open(t, srv, nil)
	e, ok, err := d.SignIn(context.Background(), "alice", []byte("alice-password"))
	if err != nil || !ok || !slices.Equal(e.Groups, []string{"backup-readers"}) {
		t.Fatalf("SignIn = %+v, %v, %v", e, ok, err)
	}
}

// BenchmarkSignIn measures sign-ins per second against a local slapd
// (LDAPS, the pool's four connections): each is a search, a bind as the
// user, a bind as the service account and a groups search.
func BenchmarkSignIn(b *testing.B) {
	srv := ldaptest.Start(b, "")
	d, err := New(Config{
		URL: srv.TLSURL(), CAFile: srv.CAFile,
		BindDN: ldaptest.ServiceDN, BindPassword: ldaptest.ServicePassword, BaseDN: ldaptest.Base,
	})
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	ctx := context.Background()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, ok, err := d.SignIn(ctx, "alice", []byte("alice-password")); err != nil || !ok {
				b.Errorf("SignIn: %v %v", ok, err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "sign-ins/s")
}

// TestLookup: without a password, the directory says whether a name is
// still a user who may sign in, with the user's name as it spells it,
// e-mail address and groups; a name with no entry, with two, a locked
// account or a removed one is "no"; a directory that hangs or is gone is
// an Unavailable error, never a "yes".
func TestLookup(t *testing.T) {
	srv := ldaptest.Start(t, "")
	d := open(t, srv, func(c *Config) { c.Timeout = 300 * time.Millisecond })
	ctx := context.Background()
	e, ok, err := d.Lookup(ctx, "ALICE")
	if err != nil || !ok || e.Name != "alice" || e.Email != "alice@example.org" || !slices.Equal(e.Groups, []string{"backup-readers"}) {
		t.Fatalf("Lookup(ALICE) = %+v, %v, %v", e, ok, err)
	}
	for _, name := range []string{"", "carol", "twin", "*", "alice)(uid=*", "al*"} {
		if e, ok, err := d.Lookup(ctx, name); err != nil || ok {
			t.Errorf("Lookup(%q) = %+v, %v, %v; want no", name, e, ok, err)
		}
	}
	bobDN := "uid=bob,ou=people," + ldaptest.Base
	srv.Lock(bobDN)
	if e, ok, err := d.Lookup(ctx, "bob"); err != nil || ok {
		t.Errorf("a locked account: %+v, %v, %v", e, ok, err)
	}
	if _, ok, err := d.SignIn(ctx, "bob", []byte("bob-password")); err != nil || ok {
		// No policy applies on this server, so its bind would succeed:
		// the lock is honoured here, not left to the server.
		t.Errorf("a locked account's password sign-in: %v, %v", ok, err)
	}
	srv.Modify("dn: uid=alice,ou=people," + ldaptest.Base + "\nchangetype: delete\n")
	if e, ok, err := d.Lookup(ctx, "alice"); err != nil || ok {
		t.Errorf("a removed user: %+v, %v, %v", e, ok, err)
	}
	srv.Pause()
	if _, ok, err := d.Lookup(ctx, "bob"); ok || !refusal.IsUnavailable(err) {
		t.Errorf("a directory that hangs: %v, %v", ok, err)
	}
	srv.Resume()
	srv.Kill()
	if _, ok, err := d.Lookup(ctx, "bob"); ok || !refusal.IsUnavailable(err) {
		t.Errorf("a directory that is gone: %v, %v", ok, err)
	}
}

// TestDisabled: the attributes that disable an account, as Active
// Directory, OpenLDAP's password policy and 389 Directory Server write
// them.
func TestDisabled(t *testing.T) {
	for _, tc := range []struct {
		attrs             map[string][]string
		disabled, forGood bool
	}{
		{nil, false, false},
		{map[string][]string{"userAccountControl": {"512"}}, false, false},   // NORMAL_ACCOUNT
		{map[string][]string{"userAccountControl": {"514"}}, true, true},     // NORMAL_ACCOUNT | ACCOUNTDISABLE
		{map[string][]string{"useraccountcontrol": {"66050"}}, true, true},   // and DONT_EXPIRE_PASSWORD
		{map[string][]string{"userAccountControl": {"66048"}}, false, false}, // NORMAL_ACCOUNT | DONT_EXPIRE_PASSWORD
		{map[string][]string{"userAccountControl": {"x"}}, true, true},       // unreadable: fail closed
		{map[string][]string{"pwdAccountLockedTime": {"000001010000Z"}}, true, true},
		// Locked until the policy's lockout ends: the bind decides.
		{map[string][]string{"pwdAccountLockedTime": {"20261205063000Z"}}, true, false},
		{map[string][]string{"nsAccountLock": {"TRUE"}}, true, true},
		{map[string][]string{"nsAccountLock": {"false"}}, false, false},
	} {
		en := ldap.NewEntry("cn=x", tc.attrs)
		if got := Disabled(en); got != tc.disabled {
			t.Errorf("Disabled(%v) = %v", tc.attrs, got)
		}
		if got := disabledForGood(en); got != tc.forGood {
			t.Errorf("disabledForGood(%v) = %v", tc.attrs, got)
		}
	}
}

// TestResolve: an administrator's command finds a name's one entry, with
// the directory's spelling and whether the account is locked; no entry
// and several entries are errors that say which.
func TestResolve(t *testing.T) {
	srv := ldaptest.Start(t, "")
	d := open(t, srv, nil)
	ctx := context.Background()
	e, disabled, err := d.Resolve(ctx, "ALICE")
	if err != nil || disabled || e.Name != "alice" || !slices.Equal(e.Groups, []string{"backup-readers"}) {
		t.Fatalf("Resolve(ALICE) = %+v, %v, %v", e, disabled, err)
	}
	if _, _, err := d.Resolve(ctx, "carol"); !errors.Is(err, ErrNoEntry) || !strings.Contains(err.Error(), `"carol"`) {
		t.Errorf("Resolve(carol): %v", err)
	}
	if _, _, err := d.Resolve(ctx, "twin"); !errors.Is(err, ErrSeveral) {
		t.Errorf("Resolve(twin): %v", err)
	}
	if _, _, err := d.Resolve(ctx, "a*"); !errors.Is(err, ErrNoEntry) {
		t.Errorf("Resolve(a*): %v", err)
	}
	srv.Lock("uid=bob,ou=people," + ldaptest.Base)
	if e, disabled, err := d.Resolve(ctx, "bob"); err != nil || !disabled || e.Name != "bob" {
		t.Errorf("Resolve(bob), locked: %+v, %v, %v", e, disabled, err)
	}
	srv.Kill()
	if _, _, err := d.Resolve(ctx, "bob"); !refusal.IsUnavailable(err) {
		t.Errorf("Resolve with the directory gone: %v", err)
	}
}
