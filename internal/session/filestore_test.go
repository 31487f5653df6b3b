package session

import (
	"context"
	"encoding/base64"
	"errors"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

func openFile(t *testing.T, dir string, clock *fakeClock) *FileStore {
	t.Helper()
	s, err := OpenFileStore(dir, clock.Now)
	if err != nil {
		t.Fatalf("OpenFileStore: %v", err)
	}
	return s
}

// TestFileStoreRestart drives a manager across close and reopen: live
// sessions survive, destroyed ones stay destroyed, expired ones are dropped.
func TestFileStoreRestart(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	clock := newClock()
	fs1 := openFile(t, dir, clock)
	m1 := newTestManager(t, clock, fs1, Options{IdleTimeout: time.Hour, Lifetime: 2 * time.Hour})

	_, kept := start(t, m1, "alice")
	_, destroyed := start(t, m1, "bob")
	if err := m1.Destroy(httptest.NewRecorder(), get(destroyed)); err != nil {
		t.Fatalf("Destroy: %v", err)
	}
	clock.Advance(90 * time.Minute) // past the idle timeout of the next one
	_, fresh := start(t, m1, "carol")
	if err := fs1.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if _, _, err := fs1.Find(context.Background(), "x"); !errors.Is(err, ErrClosed) {
		t.Errorf("Find after Close: %v, want ErrClosed", err)
	}

	// alice idled out before the restart and must not come back after it.
	fs2 := openFile(t, dir, clock)
	defer fs2.Close()
	m2 := newTestManager(t, clock, fs2, Options{IdleTimeout: time.Hour, Lifetime: 2 * time.Hour})
	tests := []struct {
		name   string
		cookie string
		want   bool
	}{
		{"live session survives", fresh.Value, true},
		{"destroyed stays destroyed", destroyed.Value, false},
		{"idle-expired is gone", kept.Value, false},
	}
	for _, tt := range tests {
		c := *fresh
		c.Value = tt.cookie
		s, ok := load(t, m2, &c)
		if ok != tt.want {
			t.Errorf("%s: Load ok = %v, want %v", tt.name, ok, tt.want)
		}
		if ok && s.Username != "carol" {
			t.Errorf("%s: user %q", tt.name, s.Username)
		}
	}
	if n := fs2.Len(); n != 1 {
		t.Errorf("reopened store holds %d records, want 1 (expired dropped on load)", n)
	}
}

func TestFileStorePermissionsAndContent(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	clock := newClock()
	fs := openFile(t, dir, clock)
	defer fs.Close()
	m := newTestManager(t, clock, fs, Options{})
	_, c := start(t, m, "alice")

	if runtime.GOOS != "windows" {
		for path, want := range map[string]os.FileMode{dir: 0o700, fs.Path(): 0o600, filepath.Join(dir, JournalName): 0o600} {
			info, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if got := info.Mode().Perm(); got != want {
				t.Errorf("%s has mode %o, want %o", path, got, want)
			}
		}
	}
	data, err := os.ReadFile(fs.Path())
	if err != nil {
		t.Fatal(err)
	}
	journal, err := os.ReadFile(filepath.Join(dir, JournalName))
	if err != nil {
		t.Fatal(err)
	}
	// The login is in the journal until the next rewrite folds it in.
	data = append(data, journal...)
	if !strings.Contains(string(data), `"alice"`) {
		t.Fatalf("neither the file nor the journal holds the session: %s", data)
	}
	if strings.Contains(string(data), c.Value) {
		t.Error("the file holds the raw session id")
	}
	var id [idLen]byte
	decodeID(&id, c.Value)
	for _, enc := range []string{string(id[:]), b64.EncodeToString(id[:]), base64.StdEncoding.EncodeToString(id[:])} {
		if strings.Contains(string(data), enc) {
			t.Error("the file holds the session id in some encoding")
		}
	}
}

func TestFileStoreTouchIsWrittenBehind(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	clock := newClock()
	fs := openFile(t, dir, clock)
	if err := fs.Commit(ctx, "k", testRecord("alice", clock.Now())); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(fs.Path())
	later := clock.Now().Add(time.Minute)
	if err := fs.Touch(ctx, "k", later, later.Add(time.Hour), nil); err != nil {
		t.Fatal(err)
	}
	fs.mu.RLock()
	armed := fs.timer != nil
	fs.mu.RUnlock()
	if !armed {
		t.Error("Touch did not schedule a write")
	}
	if after, _ := os.ReadFile(fs.Path()); string(after) != string(before) {
		t.Error("Touch rewrote the file synchronously")
	}
	if err := fs.Close(); err != nil {
		t.Fatal(err)
	}
	fs2 := openFile(t, dir, clock)
	defer fs2.Close()
	rec, ok, _ := fs2.Find(ctx, "k")
	if !ok || !rec.LastSeen.Equal(later) {
		t.Errorf("after Close and reopen: ok=%v LastSeen=%v, want %v", ok, rec.LastSeen, later)
	}
}

func TestFileStoreBadFiles(t *testing.T) {
	tests := []struct {
		name    string
		content string
		wantErr string
	}{
		{"garbage", "{not json", "corrupt"},
		{"empty", "", "corrupt"},
		{"trailing data", `{"version":1,"sessions":{}} x`, "corrupt"},
		{"wrong version", `{"version":7,"sessions":{}}`, "unsupported format version 7"},
		{"no user", `{"version":1,"sessions":{"k":{"expires":"2999-01-01T00:00:00Z"}}}`, "no user name"},
		{"wrong type", `{"version":1,"sessions":[]}`, "corrupt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, FileName)
			if err := os.WriteFile(path, []byte(tt.content), 0o600); err != nil {
				t.Fatal(err)
			}
			s, err := OpenFileStore(dir, newClock().Now)
			if err == nil {
				s.Close()
				t.Fatal("OpenFileStore accepted a bad file")
			}
			if !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), path) {
				t.Errorf("error %q should contain %q and name %s", err, tt.wantErr, path)
			}
		})
	}
}

func TestFileStoreOpenHousekeeping(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, FileName)
	stale := filepath.Join(dir, tempPrefix+"123")
	if err := os.WriteFile(stale, []byte("half"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(`{"version":1,"sessions":{}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	s := openFile(t, dir, newClock())
	defer s.Close()
	if _, err := os.Stat(stale); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("stale temporary file left behind: %v", err)
	}
	if runtime.GOOS != "windows" {
		if info, err := os.Stat(path); err != nil || info.Mode().Perm() != 0o600 {
			t.Errorf("loose file not tightened: %v %v", info.Mode(), err)
		}
	}
	if _, err := OpenFileStore("", nil); err == nil {
		t.Error("OpenFileStore accepted an empty directory name")
	}
}

func TestFileStoreClosed(t *testing.T) {
	ctx := context.Background()
	s := openFile(t, t.TempDir(), newClock())
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	rec := testRecord("a", epoch)
	checks := map[string]error{
		"Commit": s.Commit(ctx, "k", rec),
		"Delete": s.Delete(ctx, "k"),
		"Touch":  s.Touch(ctx, "k", epoch, epoch, nil),
	}
	_, checks["DeleteUser"] = s.DeleteUser(ctx, "a")
	for op, err := range checks {
		if !errors.Is(err, ErrClosed) {
			t.Errorf("%s after Close: %v, want ErrClosed", op, err)
		}
	}
}
