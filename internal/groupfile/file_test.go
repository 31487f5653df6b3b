package groupfile

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/testkit"
	"github.com/backupweb/backupweb/internal/testkit/logtest"
)

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

func TestOpenRefusesABrokenFile(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{"broken": "ops alice\n"} {
		p := filepath.Join(dir, name)
		writeFile(t, p, content)
		if _, err := Open(p, nil); err == nil || !strings.Contains(err.Error(), p+":1:") {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := Open(filepath.Join(dir, "missing"), nil); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("missing file: %v", err)
	}
	if _, err := Open(dir, nil); err == nil {
		t.Error("a folder was accepted")
	}
}

// TestReloadFailsClosed: a broken edit makes every user's groups unknown
// (not the old ones, not none), the problem is logged once, and a good
// edit brings the new groups back.
func TestReloadFailsClosed(t *testing.T) {
	p := filepath.Join(t.TempDir(), "groups")
	writeFile(t, p, "ops: alice bob\n")
	var logs logtest.Buffer
	f, err := Open(p, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	check := func(user string, want []string, wantKnown bool) {
		t.Helper()
		got, known := f.GroupsOf(user)
		if known != wantKnown || !slices.Equal(got, want) {
			t.Fatalf("%s: %q known %v, want %q known %v", user, got, known, want, wantKnown)
		}
	}
	check("bob", []string{"ops"}, true)
	writeFile(t, p, "ops: alice\nadmins bob\n")
	if err := f.Reload(); err == nil {
		t.Fatal("broken file reloaded without error")
	}
	check("alice", nil, false)
	check("bob", nil, false)
	if f.Reload() == nil || strings.Count(logs.String(), "cannot be used") != 1 {
		t.Fatalf("the breakage is not logged exactly once:\n%s", logs.String())
	}
	if strings.Contains(logs.String(), "alice") {
		t.Errorf("the log quotes the file's content:\n%s", logs.String())
	}
	writeFile(t, p, "ops: alice\nadmins: bob\n")
	if err := f.Reload(); err != nil {
		t.Fatal(err)
	}
	check("bob", []string{"admins"}, true)
	check("alice", []string{"ops"}, true)
	if !strings.Contains(logs.String(), "good again") {
		t.Errorf("no line says the file is good again:\n%s", logs.String())
	}
	os.Remove(p)
	f.Reload()
	check("alice", nil, false)
}

// TestWatchFollowsEdits: the poller switches to an edited file without a
// signal.
func TestWatchFollowsEdits(t *testing.T) {
	p := filepath.Join(t.TempDir(), "groups")
	writeFile(t, p, "ops: alice\n")
	f, err := Open(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	f.PollInterval = 10 * time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); f.Watch(ctx) }()
	defer func() { cancel(); <-done }()
	writeFile(t, p, "ops: alice\nadmins: alice\n")
	testkit.WaitUntil(t, 20*time.Second, func() bool {
		g, _ := f.GroupsOf("alice")
		return slices.Equal(g, []string{"admins", "ops"})
	}, func() string { return "the edit was not seen" })
	writeFile(t, p, "admins alice\n")
	testkit.WaitUntil(t, 20*time.Second, func() bool {
		_, known := f.GroupsOf("alice")
		return !known
	}, func() string { return "the broken edit was not seen" })
}
