package login

import (
	"context"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/testkit/loginfix"
)

// wantRemoved checks the sessions after an edit of the user file (what)
// that removed name: their session (gone) ended and they cannot sign in
// again, while the session of a user the edit left alone (kept) stands.
func (h *harness) wantRemoved(t *testing.T, what string, gone *browser, name string, kept *browser) {
	t.Helper()
	if s := gone.apiStatus(); s != http.StatusUnauthorized {
		t.Errorf("%s: %s's session answers %d, want 401", what, name, s)
	}
	if r := h.browser().login(name, loginfix.Passwords[name], "/"); r.status != http.StatusUnauthorized {
		t.Errorf("%s: %s signs in: %d", what, name, r.status)
	}
	if s := kept.apiStatus(); s != http.StatusOK {
		t.Errorf("%s: the session of a user it left alone answers %d, want 200", what, s)
	}
}

// TestReloadOnChange drives the poller by hand: each step edits the user
// file and polls once, as the watcher does every PollInterval.
func TestReloadOnChange(t *testing.T) {
	h := newHarness(t, nil)
	alice, bob := h.browser(), h.browser()
	alice.mustLogin("alice")
	bob.mustLogin("bob")

	loginfix.Passwords["carol"] = "carol-pw"
	t.Cleanup(func() { delete(loginfix.Passwords, "carol") })
	loginfix.WriteFile(t, h.usersPath, loginfix.UsersText(t, "alice", "bob", "carol"))
	h.p.poll()
	carol := h.browser()
	carol.mustLogin("carol")

	// bob is removed: his session ends at once.
	loginfix.WriteFile(t, h.usersPath, loginfix.UsersText(t, "alice", "carol"))
	h.p.poll()
	h.wantRemoved(t, "bob removed", bob, "bob", alice)

	// A broken edit keeps only the users whose line it left unchanged: it
	// removed carol, so she is refused; alice is kept. It is logged.
	loginfix.WriteFile(t, h.usersPath, loginfix.UsersText(t, "alice")+"this line has no separator\n")
	h.p.poll()
	h.wantRemoved(t, "a broken edit that removes carol", carol, "carol", alice)
	h.browser().mustLogin("alice")
	logs := h.logs.String()
	if !strings.Contains(logs, "level=ERROR") || !strings.Contains(logs, h.usersPath+":4") {
		t.Errorf("broken edit not logged with file and line:\n%s", logs)
	}
	if strings.Contains(logs, "this line has no separator") {
		t.Error("the log repeats the content of the user file")
	}

	// Polling an unchanged broken file does not read or log it again.
	before := strings.Count(h.logs.String(), "level=ERROR")
	h.p.last.racy = false
	h.p.poll()
	if after := strings.Count(h.logs.String(), "level=ERROR"); after != before {
		t.Errorf("an unchanged broken file was reported again")
	}

	// Fixing it applies the new set, and says so once.
	loginfix.WriteFile(t, h.usersPath, loginfix.UsersText(t, "alice", "carol"))
	h.p.poll()
	if n := strings.Count(h.logs.String(), "the user file is good again"); n != 1 {
		t.Errorf("want one line saying the file is good again, got %d", n)
	}
	h.browser().mustLogin("carol")
	if s := carol.apiStatus(); s != http.StatusUnauthorized {
		t.Errorf("carol's session from before she was removed: %d, want 401", s)
	}
}

func TestReloadPasswordChangeEndsSessions(t *testing.T) {
	h := newHarness(t, nil)
	b := h.browser()
	b.mustLogin("alice")
	old := loginfix.Passwords["alice"]
	loginfix.Passwords["alice"] = "alice-new-pw"
	t.Cleanup(func() { loginfix.Passwords["alice"] = old })
	loginfix.WriteFile(t, h.usersPath, loginfix.UsersText(t, "alice", "bob"))
	if err := h.p.Reload(); err != nil {
		t.Fatal(err)
	}
	if s := b.apiStatus(); s != http.StatusUnauthorized {
		t.Errorf("session after a password change: %d, want 401", s)
	}
	if r := h.browser().login("alice", old, "/"); r.status != http.StatusUnauthorized {
		t.Errorf("old password after the change: %d", r.status)
	}
	h.browser().mustLogin("alice")
}

func TestReloadErrors(t *testing.T) {
	h := newHarness(t, nil)
	b := h.browser()
	b.mustLogin("alice")
	if err := os.Remove(h.usersPath); err != nil {
		t.Fatal(err)
	}
	// A file that cannot be read grants nothing.
	if err := h.p.Reload(); err == nil {
		t.Error("Reload of a missing file succeeded")
	}
	if s := b.apiStatus(); s != http.StatusUnauthorized {
		t.Errorf("session while the user file is missing: %d, want 401", s)
	}
	if r := h.browser().login("alice", loginfix.Passwords["alice"], "/"); r.status != http.StatusUnauthorized {
		t.Errorf("login while the user file is missing: %d, want 401", r.status)
	}
	loginfix.WriteFile(t, h.usersPath, loginfix.UsersText(t, "alice", "bob"))
	if err := h.p.Reload(); err != nil {
		t.Fatal(err)
	}
	h.browser().mustLogin("alice")
}

func TestReloadZeroUsers(t *testing.T) {
	h := newHarness(t, nil)
	b := h.browser()
	b.mustLogin("alice")
	loginfix.WriteFile(t, h.usersPath, "# every user removed\n")
	if err := h.p.Reload(); err != nil {
		t.Fatalf("a user file with no users is valid at run time: %v", err)
	}
	if s := b.apiStatus(); s != http.StatusUnauthorized {
		t.Errorf("session after every user was removed: %d, want 401", s)
	}
	for _, name := range []string{"alice", "bob"} {
		if r := h.browser().login(name, loginfix.Passwords[name], "/"); r.status != http.StatusUnauthorized {
			t.Errorf("%s logs in with no users in the file: %d", name, r.status)
		}
	}
	if n := strings.Count(h.logs.String(), "lists no users; nobody can log in"); n != 1 {
		t.Errorf("want one error line saying nobody can log in, got %d:\n%s", n, h.logs)
	}
	loginfix.WriteFile(t, h.usersPath, loginfix.UsersText(t, "alice", "bob"))
	if err := h.p.Reload(); err != nil {
		t.Fatal(err)
	}
	h.browser().mustLogin("alice")
	if err := h.p.Reload(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(h.logs.String(), "no user changed") {
		t.Error("an unchanged reload is not logged")
	}
}

// TestWatcher lets the real poller find an edit.
func TestWatcher(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.PollInterval = 5 * time.Millisecond })
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go h.p.Watch(ctx)
	reloaded := make(chan struct{}, 1)
	h.p.reloadMu.Lock()
	h.p.onPoll = func() {
		select {
		case reloaded <- struct{}{}:
		default:
		}
	}
	h.p.reloadMu.Unlock()
	loginfix.Passwords["carol"] = "carol-pw"
	t.Cleanup(func() { delete(loginfix.Passwords, "carol") })
	loginfix.WriteFile(t, h.usersPath, loginfix.UsersText(t, "alice", "bob", "carol"))
	deadline := time.After(10 * time.Second)
	for !h.p.users.Load().has("carol") {
		select {
		case <-reloaded:
		case <-deadline:
			t.Fatal("the poller did not pick up the edit")
		}
	}
	h.browser().mustLogin("carol")
	if err := h.p.Close(); err != nil {
		t.Fatal(err)
	}
}
