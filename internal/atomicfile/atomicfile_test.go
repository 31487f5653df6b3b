package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"
)

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	for _, text := range []string{"first\n", "second, longer\n", ""} {
		if err := Write(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil || string(got) != text {
			t.Fatalf("content %q, %v; want %q", got, err, text)
		}
		if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
			t.Errorf("mode %v, want 0600", fi.Mode().Perm())
		}
	}
	if m, _ := filepath.Glob(filepath.Join(dir, ".f.tmp-*")); len(m) != 0 {
		t.Errorf("temporary files left: %v", m)
	}
}

// TestWriteFailureLeavesFile: a failed rename (a full disk, say) leaves
// the old content and no temporary file; a folder that cannot be written
// is an error naming the file.
func TestWriteFailureLeavesFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	os.WriteFile(path, []byte("old\n"), 0o600)
	rename = func(string, string) error { return errors.New("disk full") }
	defer func() { rename = os.Rename }()
	if err := Write(path, []byte("new\n"), 0o600); err == nil {
		t.Fatal("a failed rename: no error")
	}
	if got, _ := os.ReadFile(path); string(got) != "old\n" {
		t.Errorf("the file changed: %q", got)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, ".f.tmp-*")); len(m) != 0 {
		t.Errorf("temporary files left: %v", m)
	}
	if err := Write(filepath.Join(dir, "no-such-folder", "f"), nil, 0o600); err == nil {
		t.Error("a missing folder: no error")
	}
}

// TestLockExcludes: a second holder waits until the first releases.
func TestLockExcludes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	unlock, err := Lock(path, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	var second atomic.Bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		u, err := Lock(path, 0o600)
		if err != nil {
			t.Error(err)
			return
		}
		second.Store(true)
		u()
	}()
	time.Sleep(50 * time.Millisecond)
	if second.Load() {
		t.Fatal("the second lock was taken while the first was held")
	}
	unlock()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the second lock was never taken")
	}
	if !second.Load() {
		t.Error("the second lock was not taken")
	}
}

// TestEdit: the new content replaces the file; an error from edit is
// returned as it is and leaves the file unchanged.
func TestEdit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	os.WriteFile(path, []byte("one\n"), 0o600)
	if err := Edit(path, 0o600, func() ([]byte, error) {
		old, err := os.ReadFile(path)
		return append(old, "two\n"...), err
	}); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	if err := Edit(path, 0o600, func() ([]byte, error) { return []byte("lost\n"), boom }); err != boom {
		t.Fatalf("err %v, want boom itself", err)
	}
	if got, _ := os.ReadFile(path); string(got) != "one\ntwo\n" {
		t.Errorf("content %q", got)
	}
}
