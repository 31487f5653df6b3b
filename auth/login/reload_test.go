package login

import (
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

// TestReloadOnChange drives the poller by hand: each step edits the user
// file and polls once, as the watcher does every PollInterval.
func TestReloadOnChange(t *testing.T) {
	h := newHarness(t, nil)
	alice, bob := h.browser(), h.browser()
	alice.mustLogin("alice")
	bob.mustLogin("bob")

	testPasswords["carol"] = "carol-pw"
	t.Cleanup(func() { delete(testPasswords, "carol") })
	writeFile(t, h.usersPath, usersText(t, "alice", "bob", "carol"))
	h.p.poll()
	carol := h.browser()
	carol.mustLogin("carol")

	// bob is removed: his session ends at once.
	writeFile(t, h.usersPath, usersText(t, "alice", "carol"))
	h.p.poll()
	if s := bob.apiStatus(); s != http.StatusUnauthorized {
		t.Errorf("removed user's session: %d, want 401", s)
	}
	if r := h.browser().login("bob", "bob-pw", "/"); r.status != http.StatusUnauthorized {
		t.Errorf("removed user logs in: %d", r.status)
	}
	if s := alice.apiStatus(); s != http.StatusOK {
		t.Errorf("remaining user's session: %d, want 200", s)
	}

	// A broken edit keeps the last good users and is logged.
	writeFile(t, h.usersPath, usersText(t, "alice")+"this line has no separator\n")
	h.p.poll()
	if s := carol.apiStatus(); s != http.StatusOK {
		t.Errorf("a broken edit ended a session: %d", s)
	}
	carol2 := h.browser()
	carol2.mustLogin("carol")
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

	// Fixing it applies the new set.
	writeFile(t, h.usersPath, usersText(t, "alice"))
	h.p.poll()
	if s := carol.apiStatus(); s != http.StatusUnauthorized {
		t.Errorf("after the fix, carol's session: %d, want 401", s)
	}
}

func TestReloadPasswordChangeEndsSessions(t *testing.T) {
	h := newHarness(t, nil)
	b := h.browser()
	b.mustLogin("alice")
	old := testPasswords["alice"]
	testPasswords["alice"] = "alice-new-pw"
	t.Cleanup(func() { testPasswords["alice"] = old })
	writeFile(t, h.usersPath, usersText(t, "alice", "bob"))
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
	if err := h.p.Reload(); err == nil {
		t.Error("Reload of a missing file succeeded")
	}
	writeFile(t, h.usersPath, "")
	if err := h.p.Reload(); err == nil {
		t.Error("Reload of an empty file succeeded")
	}
	if s := b.apiStatus(); s != http.StatusOK {
		t.Errorf("session after failed reloads: %d", s)
	}
	if err := h.p.Reload(); err == nil {
		t.Error("second Reload of an empty file succeeded")
	}
	writeFile(t, h.usersPath, usersText(t, "alice", "bob"))
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
	reloaded := make(chan struct{}, 1)
	h.p.reloadMu.Lock()
	h.p.onPoll = func() {
		select {
		case reloaded <- struct{}{}:
		default:
		}
	}
	h.p.reloadMu.Unlock()
	testPasswords["carol"] = "carol-pw"
	t.Cleanup(func() { delete(testPasswords, "carol") })
	writeFile(t, h.usersPath, usersText(t, "alice", "bob", "carol"))
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
