package login

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/backupweb/backupweb/internal/auth/sessionauth"
	"github.com/backupweb/backupweb/internal/session"
	"github.com/backupweb/backupweb/internal/testkit"
)

// freshHash hashes pw with a new salt, as `backupweb user passwd` or
// `user add` would: the same password gives another line.
func freshHash(t *testing.T, pw string) string {
	t.Helper()
	h, err := bcrypt.GenerateFromPassword([]byte(pw), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	return string(h)
}

// TestChangesWhileStopped edits the user file while the service is
// stopped, the usual "change it, then restart": the old sessions must not
// survive the restart.
func TestChangesWhileStopped(t *testing.T) {
	tests := []struct {
		name  string
		users func(t *testing.T) string
	}{
		{"password changed", func(t *testing.T) string {
			return "alice:" + freshHash(t, "alice-new-pw") + "\nbob:" + testkit.Hash(t, testPasswords["bob"]) + "\n"
		}},
		{"user removed and added again with the same password", func(t *testing.T) string {
			return "bob:" + testkit.Hash(t, testPasswords["bob"]) + "\nalice:" + freshHash(t, testPasswords["alice"]) + "\n"
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, nil)
			alice, bob := h.browser(), h.browser()
			alice.mustLogin("alice")
			bob.mustLogin("bob")
			h.stop()
			writeFile(t, h.usersPath, tt.users(t))
			h.start()
			if s := alice.apiStatus(); s != http.StatusUnauthorized {
				t.Errorf("alice's session from before the change, after a restart: %d, want 401", s)
			}
			if s := bob.apiStatus(); s != http.StatusOK {
				t.Errorf("bob's line did not change, his session must survive: %d", s)
			}
		})
	}
}

// TestLoginsRacePasswordChange checks logins with the old password racing a
// password change: whatever the interleaving, once the change is in, no
// session made with the old password is accepted.
func TestLoginsRacePasswordChange(t *testing.T) {
	h := newHarness(t, nil)
	oldPw := testPasswords["alice"]
	for i := range 25 {
		// Back to the old password, then race a login with it against a
		// change to a new one.
		writeFile(t, h.usersPath, "alice:"+testkit.Hash(t, oldPw)+"\n")
		if err := h.p.Reload(); err != nil {
			t.Fatal(err)
		}
		b := h.browser()
		tok := b.formToken()
		var wg sync.WaitGroup
		var status int
		wg.Add(2)
		go func() {
			defer wg.Done()
			status = b.post(h.p.LoginPath(), map[string][]string{"username": {"alice"}, "password": {oldPw}, "csrf_token": {tok}}).status
		}()
		go func() {
			defer wg.Done()
			writeFile(t, h.usersPath, "alice:"+freshHash(t, "changed-"+oldPw)+"\n")
			if err := h.p.Reload(); err != nil {
				t.Error(err)
			}
		}()
		wg.Wait()
		if status == http.StatusSeeOther {
			if s := b.apiStatus(); s != http.StatusUnauthorized {
				t.Fatalf("round %d: a session made with the old password is accepted after the change: %d", i, s)
			}
		}
	}
}

// TestSessionOfAnotherType replays a session made by type oauth (same state
// folder, same secret key, a user name that exists) on flask-login.
func TestSessionOfAnotherType(t *testing.T) {
	h := newHarness(t, nil)
	h.stop()
	other, err := sessionauth.OpenSessions(h.env, "oauth", sessionauth.Settings{IdleTimeout: time.Hour, Lifetime: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	if _, err := other.Start(rec, httptest.NewRequest("GET", "/", nil), session.Data{Username: "alice"}); err != nil {
		t.Fatal(err)
	}
	other.Close()
	h.start()
	req, _ := http.NewRequest("GET", h.srv.URL+"/api/me", nil)
	for _, c := range rec.Result().Cookies() {
		req.AddCookie(c)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("an oauth session accepted by flask-login: %d, want 401", resp.StatusCode)
	}
}

// TestDeletedUsersOneByOne deletes every user in turn while the service
// runs, the last one too: each deleted user's login and old session are
// refused after the reload.
func TestDeletedUsersOneByOne(t *testing.T) {
	h := newHarness(t, nil)
	alice, bob := h.browser(), h.browser()
	alice.mustLogin("alice")
	bob.mustLogin("bob")
	for _, step := range []struct {
		file    string
		deleted *browser
		name    string
	}{
		{usersText(t, "alice"), bob, "bob"},
		{"# no users left\n", alice, "alice"},
	} {
		writeFile(t, h.usersPath, step.file)
		if err := h.p.Reload(); err != nil {
			t.Fatal(err)
		}
		if s := step.deleted.apiStatus(); s != http.StatusUnauthorized {
			t.Errorf("%s's session after deletion: %d, want 401", step.name, s)
		}
		if r := h.browser().login(step.name, testPasswords[step.name], "/"); r.status != http.StatusUnauthorized {
			t.Errorf("%s logs in after deletion: %d", step.name, r.status)
		}
	}
	if !strings.Contains(h.logs.String(), "nobody can log in") {
		t.Error("an empty user file is not logged")
	}
}
