package session

import (
	"context"
	"errors"
	"net/http/httptest"
	"testing"

	"github.com/backupweb/backupweb/internal/attrs"
)

// storeWithout hides every ability of a store but the three methods.
type storeWithout struct{ Store }

func TestEndMatching(t *testing.T) {
	clock := newClock()
	store := NewMemoryStore(clock.Now)
	m := newTestManager(t, clock, store, Options{Type: "oauth"})
	other := newTestManager(t, clock, store, Options{Type: "flask-login"})
	begin := func(m *Manager, user, sid string) *Session {
		w := httptest.NewRecorder()
		s, err := m.Start(w, get(), Data{Username: user, Attrs: attrs.Of(map[string]string{"sid": sid})})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	a1, a2, b := begin(m, "alice", "s1"), begin(m, "alice", "s2"), begin(m, "bob", "s1")
	foreign := begin(other, "alice", "s1") // another type's: never matched
	// A record whose MAC fails is never given to match.
	forged := testRecord("alice", clock.Now())
	forged.Type, forged.Attrs = "oauth", attrs.Of(map[string]string{"sid": "s1"})
	if err := store.Commit(context.Background(), "forged-key", forged); err != nil {
		t.Fatal(err)
	}
	var seen []Data
	n, err := m.EndMatching(context.Background(), func(d Data) bool {
		seen = append(seen, d)
		return d.Attrs.Get("sid") == "s1"
	})
	if err != nil || n != 2 {
		t.Fatalf("EndMatching = %d, %v; want 2 (alice's and bob's s1)", n, err)
	}
	if len(seen) != 3 {
		t.Errorf("match was asked about %d records, want the 3 intact ones of type oauth", len(seen))
	}
	live := func(s *Session) bool { _, ok, _ := store.Find(context.Background(), s.key); return ok }
	if live(a1) || live(b) || !live(a2) {
		t.Errorf("after EndMatching: alice s1 %v, bob s1 %v, alice s2 %v; want false false true", live(a1), live(b), live(a2))
	}
	if !live(foreign) {
		t.Error("EndMatching ended another type's session")
	}
	// A store that cannot list refuses rather than ending nothing quietly.
	blind := newTestManager(t, clock, storeWithout{store}, Options{Type: "oauth"})
	if _, err := blind.EndMatching(context.Background(), func(Data) bool { return true }); !errors.Is(err, ErrCannotList) {
		t.Errorf("EndMatching over a store that cannot list: %v, want ErrCannotList", err)
	}
}
