package session

import (
	"bytes"
	"context"
	"errors"
	"net/http/httptest"
	"testing"
	"time"
)

var (
	newKey   = []byte("fedcba9876543210fedcba9876543210")
	otherKey = []byte("the key of some other service, 32+")
)

// TestRotation runs a session through a key rotation on every store: made
// under the old key, read and used by a manager on the new key with the
// old one as previous while a manager on the old key alone keeps reading
// it, resealed, moved at its next request, and still read once the
// previous key is gone. A manager holding neither key refuses it.
func TestRotation(t *testing.T) {
	for _, kind := range storeKinds {
		t.Run(kind.name, func(t *testing.T) {
			clock := newClock()
			// A wrapper, as the Redis store is: each manager checks
			// every MAC itself.
			store := listing{kind.open(t, clock)}
			old := newTestManager(t, clock, store, Options{})
			rolled := newTestManager(t, clock, store, Options{Key: newKey, PreviousKey: testKey})
			_, c := start(t, old, "alice")

			s, ok := load(t, rolled, c)
			if !ok || s.Username != "alice" {
				t.Fatal("a session made under the previous key is not read")
			}
			if !rolled.ValidCSRF(s, old.CSRFToken(s)) {
				t.Fatal("the old key's CSRF token is refused")
			}
			if !old.ValidCSRF(s, rolled.CSRFToken(s)) {
				t.Fatal("a token given for a session of the previous key does not hold under it")
			}
			// Activity recorded by the new instance keeps the record
			// readable by the old one.
			clock.Advance(2 * time.Minute)
			if _, ok := load(t, rolled, c); !ok {
				t.Fatal("lost after activity")
			}
			if _, ok := load(t, old, c); !ok {
				t.Fatal("the old instance no longer reads it after the new one recorded activity")
			}

			n, err := rolled.Reseal(context.Background(), nil)
			if err != nil || n.Resealed != 1 || n.Current != 0 || n.Refused != 0 {
				t.Fatalf("Reseal: %+v, %v; want one resealed", n, err)
			}
			if n, err := rolled.Reseal(context.Background(), nil); err != nil || n.Resealed != 0 || n.Current != 1 {
				t.Fatalf("second Reseal: %+v, %v; want one current", n, err)
			}
			if _, ok := load(t, rolled, c); !ok {
				t.Fatal("lost after Reseal")
			}
			// Moved: the manager on the new key alone reads it.
			current := newTestManager(t, clock, store, Options{Key: newKey})
			if s, ok := load(t, current, c); !ok || s.Username != "alice" {
				t.Fatal("lost once the previous key is dropped")
			}
			stranger := newTestManager(t, clock, store, Options{Key: otherKey, PreviousKey: bytes.Repeat([]byte("x"), 40)})
			if _, ok := load(t, stranger, c); ok {
				t.Fatal("a manager holding neither key read the session")
			}
		})
	}
}

// TestRotationRefusesNeither: a record under neither key is refused and
// counted by Reseal, never rewritten.
func TestRotationRefusesNeither(t *testing.T) {
	clock := newClock()
	store := listing{NewMemoryStore(clock.Now)}
	foreign := newTestManager(t, clock, store, Options{Key: otherKey})
	_, c := start(t, foreign, "mallory")
	m := newTestManager(t, clock, store, Options{Key: newKey, PreviousKey: testKey})
	n, err := m.Reseal(context.Background(), nil)
	if err != nil || n.Refused != 1 || n.Resealed != 0 {
		t.Fatalf("Reseal: %+v, %v; want one refused", n, err)
	}
	if _, ok := load(t, m, c); ok {
		t.Fatal("a record under neither key was read")
	}
}

// TestRotationSealAndForms: sealed values and form tokens of the previous
// key are accepted, new ones are made under the current key only.
func TestRotationSealAndForms(t *testing.T) {
	clock := newClock()
	old := newTestManager(t, clock, nil, Options{})
	rolled := newTestManager(t, clock, nil, Options{Key: newKey, PreviousKey: testKey})
	current := newTestManager(t, clock, nil, Options{Key: newKey})

	sealed, err := old.Seal("pending", []byte("alice"), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := rolled.Open("pending", sealed); err != nil || string(got) != "alice" {
		t.Fatalf("Open of the previous key's value: %q, %v", got, err)
	}
	if _, err := current.Open("pending", sealed); !errors.Is(err, ErrSealInvalid) {
		t.Fatalf("without the previous key: %v, want ErrSealInvalid", err)
	}
	fresh, _ := rolled.Seal("pending", []byte("bob"), time.Minute)
	if _, err := old.Open("pending", fresh); !errors.Is(err, ErrSealInvalid) {
		t.Fatalf("a new value opens under the previous key: %v", err)
	}
	clock.Advance(2 * time.Minute)
	if _, err := rolled.Open("pending", sealed); !errors.Is(err, ErrSealExpired) {
		t.Fatalf("expired value of the previous key: %v, want ErrSealExpired", err)
	}

	w := httptest.NewRecorder()
	tok := old.FormToken(w, get())
	cookie := cookieNamed(t, w, old.FormCookieName())
	if !rolled.CheckFormToken(get(cookie), tok) {
		t.Fatal("the previous key's form token is refused")
	}
	if current.CheckFormToken(get(cookie), tok) {
		t.Fatal("a form token of a dropped key is accepted")
	}

	if fp, ok := rolled.PreviousFingerprint("hash"); !ok || fp != old.Fingerprint("hash") {
		t.Fatal("PreviousFingerprint differs from the old key's Fingerprint")
	}
	if kc, ok := rolled.PreviousKeyCheck(); !ok || kc != old.KeyCheck() {
		t.Fatal("PreviousKeyCheck differs from the old key's KeyCheck")
	}
}

func TestNewManagerPreviousKey(t *testing.T) {
	clock := newClock()
	for _, prev := range [][]byte{[]byte("short"), testKey} {
		_, err := NewManager(Options{Store: NewMemoryStore(clock.Now), Key: testKey, PreviousKey: prev})
		if err == nil {
			t.Fatalf("PreviousKey of %d bytes (same as Key: %v) accepted", len(prev), bytes.Equal(prev, testKey))
		}
	}
}

// listing hides the package's own store behind a wrapper, as the Redis
// store is to the manager, and lists through it.
type listing struct{ Store }

func (l listing) AllSessions(ctx context.Context) (map[string]Record, error) {
	return l.Store.(Lister).AllSessions(ctx)
}

// TestResealCredential: Reseal moves a session's credential fingerprint
// to the current key when it is the previous key's of the user's
// credential, and leaves one of a changed credential as it is.
func TestResealCredential(t *testing.T) {
	clock := newClock()
	store := listing{NewMemoryStore(clock.Now)}
	old := newTestManager(t, clock, store, Options{})
	for user, hash := range map[string]string{"alice": "hash-a", "bob": "hash-b"} {
		w := httptest.NewRecorder()
		if _, err := old.Start(w, get(), Data{Username: user, Cred: old.Fingerprint(hash)}); err != nil {
			t.Fatal(err)
		}
	}
	rolled := newTestManager(t, clock, store, Options{Key: newKey, PreviousKey: testKey})
	creds := map[string]string{"alice": "hash-a", "bob": "bob's new hash"}
	lookup := func(u string) (string, bool) { h, ok := creds[u]; return h, ok }
	n, err := rolled.Reseal(context.Background(), lookup)
	if err != nil || n.Resealed != 2 {
		t.Fatalf("Reseal: %+v, %v", n, err)
	}
	if n, _ := rolled.Reseal(context.Background(), lookup); n.Current != 2 || n.Resealed != 0 {
		t.Fatalf("second Reseal: %+v", n)
	}
	recs, _ := store.AllSessions(context.Background())
	for _, rec := range recs {
		want := rolled.Fingerprint(creds[rec.Username])
		if rec.Username == "bob" {
			want = old.Fingerprint("hash-b") // changed since: left, and refused
		}
		if rec.Cred != want {
			t.Errorf("%s: Cred not as expected after Reseal", rec.Username)
		}
	}
}
