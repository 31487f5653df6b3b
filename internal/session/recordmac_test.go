package session

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/attrs"
	"github.com/backupweb/backupweb/internal/testkit/logtest"
)

// TestStoredRecordsAreAuthenticated plays whoever can write the store: each
// change to a stored record, or a record moved to another key, is refused
// (no session) and logged once, in the memory and the file store alike.
func TestStoredRecordsAreAuthenticated(t *testing.T) {
	tamper := []struct {
		name string
		// change alters the store as a writer of it would; admin and bob
		// are the keys of two live sessions.
		change func(t *testing.T, s Store, admin, bob string)
	}{
		{"admin's record copied onto bob's key", func(t *testing.T, s Store, admin, bob string) {
			rec := find(t, s, admin)
			commit(t, s, bob, rec)
		}},
		{"user name edited", func(t *testing.T, s Store, _, bob string) {
			rec := find(t, s, bob)
			rec.Username = "admin"
			commit(t, s, bob, rec)
		}},
		{"deadline moved", func(t *testing.T, s Store, _, bob string) {
			rec := find(t, s, bob)
			rec.Expires = rec.Expires.Add(365 * 24 * time.Hour)
			commit(t, s, bob, rec)
		}},
		{"activity moved", func(t *testing.T, s Store, _, bob string) {
			rec := find(t, s, bob)
			rec.LastSeen = rec.LastSeen.Add(time.Hour)
			commit(t, s, bob, rec)
		}},
		{"creation moved", func(t *testing.T, s Store, _, bob string) {
			rec := find(t, s, bob)
			rec.Created = rec.Created.Add(time.Hour)
			commit(t, s, bob, rec)
		}},
		{"attribute added", func(t *testing.T, s Store, _, bob string) {
			rec := find(t, s, bob)
			rec.Attrs = attrs.Of(map[string]string{"email": "admin@corp.example"})
			commit(t, s, bob, rec)
		}},
		{"credential fingerprint replaced", func(t *testing.T, s Store, admin, bob string) {
			rec := find(t, s, bob)
			rec.Cred = find(t, s, admin).Cred
			commit(t, s, bob, rec)
		}},
		{"MAC removed", func(t *testing.T, s Store, _, bob string) {
			rec := find(t, s, bob)
			rec.MAC = nil
			commit(t, s, bob, rec)
		}},
		{"MAC of another record", func(t *testing.T, s Store, admin, bob string) {
			rec := find(t, s, bob)
			rec.MAC = find(t, s, admin).MAC
			commit(t, s, bob, rec)
		}},
	}
	stores := map[string]func(t *testing.T, clock *fakeClock) Store{
		"memory": func(_ *testing.T, clock *fakeClock) Store { return NewMemoryStore(clock.Now) },
		// Checked once per version (verifiedCache), as Redis is: bob's
		// record is read, and so known, before it is changed.
		"remote": func(_ *testing.T, clock *fakeClock) Store { return &remoteStore{NewMemoryStore(clock.Now)} },
		"file": func(t *testing.T, clock *fakeClock) Store {
			fs, err := OpenFileStore(t.TempDir(), clock.Now)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { fs.Close() })
			return fs
		},
	}
	for storeName, open := range stores {
		for _, tc := range tamper {
			t.Run(storeName+"/"+tc.name, func(t *testing.T) {
				clock := newClock()
				var logs logtest.Buffer
				s := open(t, clock)
				m := newTestManager(t, clock, s, Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
				admin, adminCookie := startAs(t, m, Data{Username: "admin", Cred: "admin-cred"})
				bob, bobCookie := startAs(t, m, Data{Username: "bob", Cred: "bob-cred"})
				if got, ok := load(t, m, bobCookie); !ok || got.Username != "bob" {
					t.Fatalf("before: %v %v", got, ok)
				}
				tc.change(t, s, admin.key, bob.key)
				for range 3 {
					if got, ok := load(t, m, bobCookie); ok {
						t.Fatalf("a changed record was accepted: user %q", got.Username)
					}
				}
				if n := strings.Count(logs.String(), "fails its check"); n != 1 {
					t.Errorf("%d log lines about the refused record, want 1:\n%s", n, logs.String())
				}
				if strings.Contains(logs.String(), bob.key) {
					t.Error("the log names the store key")
				}
				if got, ok := load(t, m, adminCookie); !ok || got.Username != "admin" {
					t.Errorf("the untouched session was lost: %v %v", got, ok)
				}
			})
		}
	}
}

// TestRecordsSurviveActivity: a record whose activity the manager
// refreshed (Touch, or Commit for a store without Touch) still checks, and
// a refresh from another secret key does not.
func TestRecordsSurviveActivity(t *testing.T) {
	clock := newClock()
	s := NewMemoryStore(clock.Now)
	m := newTestManager(t, clock, s, Options{IdleTimeout: time.Hour})
	_, c := start(t, m, "alice")
	for range 5 {
		clock.Advance(20 * time.Minute)
		if _, ok := load(t, m, c); !ok {
			t.Fatal("a session refreshed by the manager was refused")
		}
	}
	other := newTestManager(t, clock, s, Options{Key: []byte("another secret key, 32 bytes ...")})
	if _, ok := load(t, other, c); ok {
		t.Fatal("a manager with another secret key accepted the record")
	}
}

// TestEditedSessionFile edits the file store's files while the service is
// stopped: the user name in the journal and in the state file. The
// records are refused after the restart.
func TestEditedSessionFile(t *testing.T) {
	for _, flush := range []bool{false, true} {
		clock := newClock()
		dir := t.TempDir()
		fs, err := OpenFileStore(dir, clock.Now)
		if err != nil {
			t.Fatal(err)
		}
		m := newTestManager(t, clock, fs, Options{})
		startAs(t, m, Data{Username: "admin"})
		_, bob := startAs(t, m, Data{Username: "bob"})
		if flush {
			if err := fs.Flush(); err != nil {
				t.Fatal(err)
			}
		}
		if err := fs.Close(); err != nil {
			t.Fatal(err)
		}
		edited := 0
		for _, name := range []string{FileName, JournalName} {
			path := filepath.Join(dir, name)
			b, err := os.ReadFile(path)
			if err != nil {
				continue
			}
			if nb := bobToAdmin.ReplaceAll(b, []byte(`"username":${1}"admin"`)); !bytes.Equal(nb, b) {
				edited++
				if err := os.WriteFile(path, nb, 0o600); err != nil {
					t.Fatal(err)
				}
			}
		}
		if edited == 0 {
			t.Fatalf("flush=%v: bob's record found in no file of %s", flush, dir)
		}
		fs, err = OpenFileStore(dir, clock.Now)
		if err != nil {
			t.Fatal(err)
		}
		m = newTestManager(t, clock, fs, Options{})
		if got, ok := load(t, m, bob); ok {
			t.Errorf("flush=%v: an edited session file made bob %q", flush, got.Username)
		}
		fs.Close()
	}
}

// bobToAdmin finds bob's user name in a stored record, indented or not.
var bobToAdmin = regexp.MustCompile(`"username":(\s*)"bob"`)

func startAs(t *testing.T, m *Manager, d Data) (*Session, *http.Cookie) {
	t.Helper()
	w := httptest.NewRecorder()
	s, err := m.Start(w, get(), d)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	return s, cookieNamed(t, w, m.CookieName())
}

func find(t *testing.T, s Store, key string) Record {
	t.Helper()
	rec, ok, err := s.Find(context.Background(), key)
	if err != nil || !ok {
		t.Fatalf("Find: %v %v", ok, err)
	}
	return rec
}

func commit(t *testing.T, s Store, key string, rec Record) {
	t.Helper()
	if err := s.Commit(context.Background(), key, rec); err != nil {
		t.Fatal(err)
	}
}
