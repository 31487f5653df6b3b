package session

import (
	"context"
	"testing"
)

// standingStore is a store outside the package (no shared path) with
// generations, an index and FindStanding, which answers standing.
type standingStore struct {
	Store
	gen      uint64
	indexed  bool
	standing Standing
	asked    int // UserGeneration and Indexed calls
}

func (s *standingStore) UserGeneration(context.Context, string) (uint64, error) {
	s.asked++
	return s.gen, nil
}

func (s *standingStore) Indexed(context.Context, string, string) (bool, error) {
	s.asked++
	return s.indexed, nil
}

func (s *standingStore) FindStanding(ctx context.Context, key string) (Record, bool, Standing, error) {
	rec, ok, err := s.Store.Find(ctx, key)
	return rec, ok, s.standing, err
}

// TestLoadUsesStanding: the manager takes a session's generation and
// index entry from the store's Standing when it was read for the
// record's user, and asks for them alone otherwise; either way a moved
// generation or a missing index entry refuses the session.
func TestLoadUsesStanding(t *testing.T) {
	for _, tc := range []struct {
		name         string
		standing     Standing
		gen          uint64
		indexed      bool
		wantLoad     bool
		wantAskedFor bool
	}{
		{"the user's, in force", Standing{User: "alice", Indexed: true}, 9, false, true, false},
		{"the user's, generation moved", Standing{User: "alice", Gen: 9, Indexed: true}, 0, true, false, false},
		{"the user's, not indexed", Standing{User: "alice"}, 0, true, false, false},
		{"not read", Standing{}, 0, true, true, true},
		{"not read, generation moved", Standing{}, 9, true, false, true},
		{"another user's", Standing{User: "bob", Indexed: true}, 0, false, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := newClock()
			st := &standingStore{Store: NewMemoryStore(clock.Now), gen: tc.gen, indexed: tc.indexed, standing: tc.standing}
			// Signed in before the generation is set: the record holds 0.
			gen := st.gen
			st.gen = 0
			m := newTestManager(t, clock, st, Options{})
			_, c := start(t, m, "alice")
			st.gen, st.asked = gen, 0
			if _, ok := load(t, m, c); ok != tc.wantLoad {
				t.Errorf("loads: %v, want %v", ok, tc.wantLoad)
			}
			if asked := st.asked > 0; asked != tc.wantAskedFor {
				t.Errorf("asked the store for the standing: %v, want %v", asked, tc.wantAskedFor)
			}
		})
	}
}
