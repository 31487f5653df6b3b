package secondfactor_test

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/backupweb/backupweb/internal/auth/login"
	"github.com/backupweb/backupweb/internal/auth/secondfactor"
	"github.com/backupweb/backupweb/internal/directory"
	"github.com/backupweb/backupweb/internal/refusal"
	"github.com/backupweb/backupweb/internal/testkit/browsertest"
	"github.com/backupweb/backupweb/internal/testkit/ldaptest"
)

// finishStatus records the status and Retry-After of the last answer to
// the passkey sign-in's finish.
type finishStatus struct {
	mu         sync.Mutex
	status     int
	retryAfter string
}

func (f *finishStatus) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != secondfactor.PasskeyLoginFinish {
			next.ServeHTTP(w, r)
			return
		}
		rec := &statusWriter{ResponseWriter: w}
		next.ServeHTTP(rec, r)
		f.mu.Lock()
		f.status, f.retryAfter = rec.status, w.Header().Get("Retry-After")
		f.mu.Unlock()
	})
}

func (f *finishStatus) last() (int, string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.status, f.retryAfter
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (s *statusWriter) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

// TestBrowserDirectoryPasskeySignIn: with users = ldap and passkey_login,
// a directory user registers a passkey in Chromium (its virtual
// authenticator) and signs in with it alone; each such sign-in asks the
// directory, without a password, whether the user is still there and
// enabled, and reads their groups: a user added to a group has it in the
// new session, a locked or removed user is refused (401, logged), and a
// directory that hangs gets 503 with Retry-After and no session.
func TestBrowserDirectoryPasskeySignIn(t *testing.T) {
	srv := ldaptest.Start(t, "")
	ctx := browsertest.New(t)
	fs := &finishStatus{}
	ph := &passkeyHarness{bodies: map[string][]byte{}}
	state := t.TempDir()
	ph.harness = newHarnessWith(t, func(c *login.Config) {
		c.UsersFrom, c.UsersFile, c.UseBcrypt = login.UsersFromDirectory, "", false
		c.SecondFactor, c.PasskeyLogin = login.SecondFactorOptional, true
		c.FactorsFile, c.TokensFile = filepath.Join(state, "factors"), filepath.Join(state, "tokens")
		c.Directory = directory.Config{
			URL: srv.StartTLSURL(), StartTLS: true, CAFile: srv.CAFile,
			BindDN: ldaptest.ServiceDN, BindPassword: ldaptest.ServicePassword,
			BaseDN: ldaptest.Base, Timeout: 500 * time.Millisecond,
		}
	}, func(h *harness) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ph.base = fmt.Sprintf("http://localhost:%d", ln.Addr().(*net.TCPAddr).Port)
		if h.Env.PublicURL, err = url.Parse(ph.base); err != nil {
			t.Fatal(err)
		}
		h.Listener, h.Wrap = ln, func(next http.Handler) http.Handler { return fs.wrap(ph.record(next)) }
	})
	b := &pkBrowser{factorBrowser: factorBrowser{T: t, ctx: ctx, h: ph.harness}, ph: ph, authn: addAuthenticator(t, ctx)}
	aliceDN := "uid=alice,ou=people," + ldaptest.Base
	pw := ldaptest.Passwords["alice"]

	b.run(
		chromedp.Navigate(ph.base+"/login"),
		browsertest.SignIn("ALICE", pw),
		chromedp.WaitVisible(chromedp.CSS(`table.backups`)),
		chromedp.Navigate(ph.base+secondfactor.ReauthURL(secondfactor.PasskeysPath)), chromedp.WaitVisible(chromedp.CSS(`#reauth-form`)),
		chromedp.SendKeys(chromedp.CSS(`#password`), pw),
		chromedp.Click(chromedp.CSS(`#reauth-form button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`#passkey-name`)),
		chromedp.SendKeys(chromedp.CSS(`#passkey-name`), "Laptop"),
		chromedp.Click(chromedp.CSS(`#passkey-add button`)),
		chromedp.WaitVisible(chromedp.CSS(`#passkey-notice`)),
	)
	if keys := b.stored(); len(keys) != 1 {
		t.Fatalf("alice's passkeys: %+v", keys)
	}
	b.signOut()

	// Alone, from the login page: the directory's name, groups and
	// e-mail address in the session, read at this sign-in.
	srv.Modify("dn: cn=admins,ou=groups," + ldaptest.Base + "\nchangetype: modify\nadd: member\nmember: " + aliceDN + "\n")
	b.usePasskey(`table.backups`)
	u := browserUser(t, ctx, ph)
	if u.Name != "alice" || u.SecondFactor != secondfactor.SecondFactorPasskey || !slices.Equal(u.Groups, []string{"admins", "backup-readers"}) || u.Attrs.Get(login.AttrEmail) != "alice@example.org" {
		t.Fatalf("signed in as %+v", u)
	}
	b.signOut()

	refusedWith := func(what string, status int, message string) {
		t.Helper()
		b.usePasskey(`#passkey-error`)
		if got := b.text(`#passkey-error`); got != message {
			t.Errorf("%s: error shown %q, want %q", what, got, message)
		}
		if s, ra := fs.last(); s != status || status == http.StatusServiceUnavailable && ra == "" {
			t.Errorf("%s: finish answered %d, Retry-After %q; want %d", what, s, ra, status)
		}
		if u := browserUser(t, ctx, ph); u.Name != "" {
			t.Errorf("%s: signed in %q", what, u.Name)
		}
	}

	srv.Pause()
	refusedWith("the directory hanging", http.StatusServiceUnavailable, refusal.DirectoryNotAnswering.Message())
	srv.Resume()
	if !strings.Contains(ph.Logs.String(), "auth: the directory did not answer; user not admitted") {
		t.Error("no error line for the directory that hung")
	}

	srv.Lock(aliceDN)
	b.run(chromedp.Navigate(ph.base + "/login"))
	refusedWith("alice locked", http.StatusUnauthorized, refusal.PasskeyRefused.Message())
	if logs := ph.Logs.String(); !strings.Contains(logs, "not in the directory, or is disabled there") || !strings.Contains(logs, "user=alice") {
		t.Errorf("the refusal is not logged with its user and reason: %s", logs)
	}

	srv.Modify("dn: " + aliceDN + "\nchangetype: modify\ndelete: pwdAccountLockedTime\n")
	b.run(chromedp.Navigate(ph.base + "/login"))
	b.usePasskey(`table.backups`)
	b.signOut()

	srv.Modify("dn: " + aliceDN + "\nchangetype: delete\n")
	refusedWith("alice removed", http.StatusUnauthorized, refusal.PasskeyRefused.Message())
}
