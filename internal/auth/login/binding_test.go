package login_test

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
	"github.com/backupweb/backupweb/internal/testkit/logintest"
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
			return "alice:" + freshHash(t, "alice-new-pw") + "\nbob:" + testkit.Hash(t, logintest.Passwords["bob"]) + "\n"
		}},
		{"user removed and added again with the same password", func(t *testing.T) string {
			return "bob:" + testkit.Hash(t, logintest.Passwords["bob"]) + "\nalice:" + freshHash(t, logintest.Passwords["alice"]) + "\n"
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := logintest.New(t, nil)
			alice, bob := h.Browser(), h.Browser()
			alice.MustLogin("alice")
			bob.MustLogin("bob")
			h.Stop()
			logintest.WriteFile(t, h.UsersPath, tt.users(t))
			h.Start()
			if s := alice.APIStatus(); s != http.StatusUnauthorized {
				t.Errorf("alice's session from before the change, after a restart: %d, want 401", s)
			}
			if s := bob.APIStatus(); s != http.StatusOK {
				t.Errorf("bob's line did not change, his session must survive: %d", s)
			}
		})
	}
}

// TestLoginsRacePasswordChange checks logins with the old password racing a
// password change: whatever the interleaving, once the change is in, no
// session made with the old password is accepted.
func TestLoginsRacePasswordChange(t *testing.T) {
	h := logintest.New(t, nil)
	oldPw := logintest.Passwords["alice"]
	for i := range 25 {
		// Back to the old password, then race a login with it against a
		// change to a new one.
		logintest.WriteFile(t, h.UsersPath, "alice:"+testkit.Hash(t, oldPw)+"\n")
		if err := h.P.Reload(); err != nil {
			t.Fatal(err)
		}
		b := h.Browser()
		tok := b.FormToken()
		var wg sync.WaitGroup
		var status int
		wg.Add(2)
		go func() {
			defer wg.Done()
			status = b.Post(h.P.LoginPath(), map[string][]string{"username": {"alice"}, "password": {oldPw}, "csrf_token": {tok}}).Status
		}()
		go func() {
			defer wg.Done()
			logintest.WriteFile(t, h.UsersPath, "alice:"+freshHash(t, "changed-"+oldPw)+"\n")
			if err := h.P.Reload(); err != nil {
				t.Error(err)
			}
		}()
		wg.Wait()
		if status == http.StatusSeeOther {
			if s := b.APIStatus(); s != http.StatusUnauthorized {
				t.Fatalf("round %d: a session made with the old password is accepted after the change: %d", i, s)
			}
		}
	}
}

// TestSessionOfAnotherType replays a session made by type oauth (same state
// folder, same secret key, a user name that exists) on flask-login.
func TestSessionOfAnotherType(t *testing.T) {
	h := logintest.New(t, nil)
	h.Stop()
	other, err := sessionauth.OpenSessions(h.Env, "oauth", sessionauth.Settings{IdleTimeout: time.Hour, Lifetime: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	if _, err := other.Start(rec, httptest.NewRequest("GET", "/", nil), session.Data{Username: "alice"}); err != nil {
		t.Fatal(err)
	}
	other.Close()
	h.Start()
	req, _ := http.NewRequest("GET", h.Srv.URL+"/api/me", nil)
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
	h := logintest.New(t, nil)
	alice, bob := h.Browser(), h.Browser()
	alice.MustLogin("alice")
	bob.MustLogin("bob")
	for _, step := range []struct {
		file    string
		deleted *logintest.Browser
		name    string
	}{
		{logintest.UsersText(t, "alice"), bob, "bob"},
		{"# no users left\n", alice, "alice"},
	} {
		logintest.WriteFile(t, h.UsersPath, step.file)
		if err := h.P.Reload(); err != nil {
			t.Fatal(err)
		}
		if s := step.deleted.APIStatus(); s != http.StatusUnauthorized {
			t.Errorf("%s's session after deletion: %d, want 401", step.name, s)
		}
		if r := h.Browser().Login(step.name, logintest.Passwords[step.name], "/"); r.Status != http.StatusUnauthorized {
			t.Errorf("%s logs in after deletion: %d", step.name, r.Status)
		}
	}
	if !strings.Contains(h.Logs.String(), "nobody can log in") {
		t.Error("an empty user file is not logged")
	}
}
