package session

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestJournalSurvivesACrash opens a second store over the folder of one
// that was never closed: every acknowledged login and logout is there.
func TestJournalSurvivesACrash(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	clock := newClock()
	first, err := OpenFileStore(dir, clock.Now)
	if err != nil {
		t.Fatal(err)
	}
	first.Commit(ctx, "a", testRecord("alice", clock.Now()))
	first.Commit(ctx, "b", testRecord("bob", clock.Now()))
	first.Commit(ctx, "c", testRecord("carol", clock.Now()))
	first.Delete(ctx, "b")
	first.DeleteUser(ctx, "carol")
	first.Commit(ctx, "c2", testRecord("carol", clock.Now()))
	// No Close: the process died.
	second := openFile(t, dir, clock)
	defer second.Close()
	for key, want := range map[string]bool{"a": true, "b": false, "c": false, "c2": true} {
		if _, ok, _ := second.Find(ctx, key); ok != want {
			t.Errorf("after a crash, session %s present = %v, want %v", key, ok, want)
		}
	}
	if data, _ := os.ReadFile(filepath.Join(dir, JournalName)); len(data) != 0 {
		t.Errorf("opening folds the journal into the file; it still holds %d bytes", len(data))
	}
}

// TestJournalReplayOrder: entries may reach the file out of order; replay
// follows their sequence numbers, skips what the file already holds,
// ignores a torn last line and refuses a damaged one.
func TestJournalReplayOrder(t *testing.T) {
	dir := t.TempDir()
	clock := newClock()
	rec := `{"username":"alice","created":"2025-01-01T00:00:00Z","last_seen":"2025-01-01T00:00:00Z","csrf":"","expires":"2999-01-01T00:00:00Z"}`
	os.WriteFile(filepath.Join(dir, FileName), []byte(`{"version":1,"seq":5,"sessions":{}}`), 0o600)
	journal := strings.Join([]string{
		`{"seq":8,"op":"del","key":"k"}`,
		`{"seq":7,"op":"put","key":"k","rec":` + rec + `}`,
		`{"seq":4,"op":"put","key":"old","rec":` + rec + `}`,
		`{"seq":9,"op":"put","key":"k2","rec":` + rec + `}`,
		`{"seq":10,"op":"put","key":"torn"`,
	}, "\n")
	os.WriteFile(filepath.Join(dir, JournalName), []byte(journal), 0o600)
	s := openFile(t, dir, clock)
	ctx := context.Background()
	for key, want := range map[string]bool{"k": false, "old": false, "k2": true, "torn": false} {
		if _, ok, _ := s.Find(ctx, key); ok != want {
			t.Errorf("session %s present = %v, want %v", key, ok, want)
		}
	}
	s.Close()

	os.WriteFile(filepath.Join(dir, JournalName), []byte("garbage\n"+`{"seq":99,"op":"del","key":"k"}`+"\n"), 0o600)
	if _, err := OpenFileStore(dir, clock.Now); err == nil || !strings.Contains(err.Error(), "corrupt at line 1") {
		t.Fatalf("a damaged journal must stop the store, got %v", err)
	}
}

// TestJournalFolds: a long journal is folded into the file by a rewrite.
func TestJournalFolds(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	clock := newClock()
	s := openFile(t, dir, clock)
	defer s.Close()
	for range foldAfter + 5 {
		s.Commit(ctx, "k", testRecord("alice", clock.Now()))
	}
	s.mu.Lock()
	scheduled := s.timer != nil
	s.mu.Unlock()
	if !scheduled {
		t.Fatal("a long journal did not schedule a rewrite")
	}
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, JournalName)); len(data) != 0 {
		t.Fatalf("after the rewrite the journal holds %d bytes", len(data))
	}
}

// TestJournalLineTooLong: a journal line longer than the reader takes is
// an error naming the file and the line.
func TestJournalLineTooLong(t *testing.T) {
	path := filepath.Join(t.TempDir(), JournalName)
	text := `{"seq":1,"op":"del","key":"k"}` + "\n" + `{"seq":2,"op":"del","key":"` + strings.Repeat("k", 17<<20) + `"}` + "\n"
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	_, _, err := readJournal(path, 0)
	if err == nil || !strings.Contains(err.Error(), path+" at line 2") {
		t.Fatalf("readJournal: %v", err)
	}
}
