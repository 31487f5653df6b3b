package session

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/attrs"
)

// storeKinds builds each Store implementation on a clock.
var storeKinds = []struct {
	name string
	open func(t *testing.T, clock *fakeClock) Store
}{
	{"memory", func(t *testing.T, clock *fakeClock) Store { return NewMemoryStore(clock.Now) }},
	{"file", func(t *testing.T, clock *fakeClock) Store {
		s, err := OpenFileStore(t.TempDir(), clock.Now)
		if err != nil {
			t.Fatalf("OpenFileStore: %v", err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}},
}

func testRecord(user string, now time.Time) Record {
	return Record{
		Data:     Data{Username: user, Attrs: attrs.Of(map[string]string{"email": user + "@example.com"})},
		Created:  now,
		LastSeen: now,
		CSRF:     []byte("0123456789abcdef0123456789abcdef"),
		Expires:  now.Add(time.Hour),
	}
}

func TestStores(t *testing.T) {
	ctx := context.Background()
	for _, kind := range storeKinds {
		t.Run(kind.name, func(t *testing.T) {
			clock := newClock()
			s := kind.open(t, clock)
			if _, ok, err := s.Find(ctx, "unknown"); ok || err != nil {
				t.Fatalf("Find(unknown) = %v, %v; want false, nil", ok, err)
			}

			rec := testRecord("alice", clock.Now())
			if err := s.Commit(ctx, "k1", rec); err != nil {
				t.Fatalf("Commit: %v", err)
			}
			rec.CSRF[0] = 'X'
			got, ok, err := s.Find(ctx, "k1")
			if !ok || err != nil {
				t.Fatalf("Find(k1) = %v, %v", ok, err)
			}
			if got.Username != "alice" || got.Attrs.Get("email") != "alice@example.com" || got.CSRF[0] != '0' {
				t.Errorf("stored record aliased the caller's: %+v", got)
			}
			got.CSRF[0] = 'Y'
			again, _, _ := s.Find(ctx, "k1")
			if again.CSRF[0] != '0' {
				t.Error("Find returned the store's own CSRF secret")
			}

			// Touch refreshes an existing record and never creates one.
			tc := s.(Toucher)
			later := clock.Now().Add(time.Minute)
			if err := tc.Touch(ctx, "k1", later, later.Add(time.Hour), nil); err != nil {
				t.Fatalf("Touch: %v", err)
			}
			if got, _, _ := s.Find(ctx, "k1"); !got.LastSeen.Equal(later) || got.Username != "alice" {
				t.Errorf("after Touch: LastSeen %v user %q", got.LastSeen, got.Username)
			}
			if err := tc.Touch(ctx, "ghost", later, later.Add(time.Hour), nil); err != nil {
				t.Fatalf("Touch(ghost): %v", err)
			}
			if _, ok, _ := s.Find(ctx, "ghost"); ok {
				t.Error("Touch created a record")
			}

			// Records past Expires are invisible.
			if err := s.Commit(ctx, "short", Record{Data: Data{Username: "bob"}, Expires: clock.Now().Add(time.Second)}); err != nil {
				t.Fatal(err)
			}
			clock.Advance(time.Second)
			if _, ok, _ := s.Find(ctx, "short"); ok {
				t.Error("expired record found")
			}

			if err := s.Commit(ctx, "noexp", Record{Data: Data{Username: "bob"}}); !errors.Is(err, errNoExpiry) {
				t.Errorf("Commit without Expires: %v, want errNoExpiry", err)
			}

			if err := s.Delete(ctx, "k1"); err != nil {
				t.Fatalf("Delete: %v", err)
			}
			if _, ok, _ := s.Find(ctx, "k1"); ok {
				t.Error("deleted record found")
			}
			if err := s.Delete(ctx, "k1"); err != nil {
				t.Errorf("second Delete: %v", err)
			}

			// DeleteUser ends all of one user's sessions and no other.
			for _, k := range []string{"c1", "c2"} {
				s.Commit(ctx, k, testRecord("carol", clock.Now()))
			}
			s.Commit(ctx, "d1", testRecord("dave", clock.Now()))
			n, err := s.(UserDeleter).DeleteUser(ctx, "carol")
			if n != 2 || err != nil {
				t.Fatalf("DeleteUser = %d, %v; want 2, nil", n, err)
			}
			for k, want := range map[string]bool{"c1": false, "c2": false, "d1": true} {
				if _, ok, _ := s.Find(ctx, k); ok != want {
					t.Errorf("after DeleteUser, Find(%s) = %v, want %v", k, ok, want)
				}
			}
		})
	}
}

func TestMemoryStoreSweeps(t *testing.T) {
	ctx := context.Background()
	clock := newClock()
	s := NewMemoryStore(clock.Now)
	for _, k := range []string{"a", "b", "c"} {
		s.Commit(ctx, k, Record{Data: Data{Username: "u"}, Expires: clock.Now().Add(time.Second)})
	}
	clock.Advance(2 * sweepInterval)
	s.Commit(ctx, "live", testRecord("u", clock.Now()))
	if n := s.Len(); n != 1 {
		t.Errorf("after sweep the store holds %d records, want 1", n)
	}
}

// TestLimitUserSameMillisecond: two sign-ins in the same millisecond, the
// one with the larger key older by a few microseconds: the limit ends the
// smaller key, whichever was committed first, in every store (and so as
// Redis's index, scored in milliseconds, does).
func TestLimitUserSameMillisecond(t *testing.T) {
	ctx := context.Background()
	for _, kind := range storeKinds {
		for _, order := range [][]string{{"k-a", "k-b"}, {"k-b", "k-a"}} {
			t.Run(kind.name+"/"+order[0]+" first", func(t *testing.T) {
				clock := newClock()
				s := kind.open(t, clock)
				at := clock.Now().Truncate(time.Millisecond).Add(500 * time.Microsecond)
				created := map[string]time.Time{"k-b": at, "k-a": at.Add(3 * time.Microsecond)}
				for _, k := range order {
					if err := s.Commit(ctx, k, testRecord("alice", created[k])); err != nil {
						t.Fatal(err)
					}
				}
				n, err := s.(UserLimiter).LimitUser(ctx, "alice", 1)
				if n != 1 || err != nil {
					t.Fatalf("LimitUser = %d, %v; want 1", n, err)
				}
				for k, want := range map[string]bool{"k-a": false, "k-b": true} {
					if _, ok, _ := s.Find(ctx, k); ok != want {
						t.Errorf("%s found = %v, want %v (the smaller key ends)", k, ok, want)
					}
				}
			})
		}
	}
}
