package session

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/attrs"
)

// remoteStore is a store of another package as the manager sees it (a
// type that is not *MemoryStore or *FileStore): every Find returns a
// fresh copy, and the manager checks records once per version through
// its verifiedCache.
type remoteStore struct{ *MemoryStore }

// TestVerifiedOncePerVersion: with a store of another package, a record's
// MAC is checked in full at its first read and then only when the record
// differs from the version that checked; a record that differs in any
// byte, a deleted one, and one under another store key are not taken from
// what was checked.
func TestVerifiedOncePerVersion(t *testing.T) {
	ctx := context.Background()
	clock := newClock()
	rs := &remoteStore{NewMemoryStore(clock.Now)}
	m := newTestManager(t, clock, rs, Options{})
	if m.verified == nil || m.shared != nil {
		t.Fatal("the manager does not check a remote store's records once per version")
	}
	bob, bobCookie := startAs(t, m, Data{Username: "bob", Attrs: attrs.Of(map[string]string{"email": "bob@example.org"})})
	for range 3 {
		if got, ok := load(t, m, bobCookie); !ok || got.Username != "bob" {
			t.Fatalf("bob's session refused: %v %v", got, ok)
		}
	}
	if n := m.verified.len(); n != 1 {
		t.Fatalf("%d versions known to have checked, want 1", n)
	}
	rec := find(t, rs, bob.key)
	if ks := m.verified.lookup(bob.key, encodingOf(bob.key, &rec), rec.MAC); ks != m.keyset {
		t.Fatal("the version that checked is not known under the current key")
	}

	// The same bytes, read again: known. Any change: not known, and
	// refused by the full check.
	changed := map[string]func(r *Record){
		"user":       func(r *Record) { r.Username = "admin" },
		"attribute":  func(r *Record) { r.Attrs = attrs.Of(map[string]string{"email": "admin@example.org"}) },
		"deadline":   func(r *Record) { r.Expires = r.Expires.Add(time.Hour) },
		"CSRF":       func(r *Record) { r.CSRF = append([]byte{'x'}, r.CSRF[1:]...) },
		"generation": func(r *Record) { r.Gen++ },
		"MAC":        func(r *Record) { r.MAC = append([]byte{r.MAC[0] ^ 1}, r.MAC[1:]...) },
	}
	for name, change := range changed {
		r := rec.clone()
		change(&r)
		if ks := m.verified.lookup(bob.key, encodingOf(bob.key, &r), r.MAC); ks != nil {
			t.Errorf("%s changed: taken as checked", name)
		}
	}
	if ks := m.verified.lookup("another-key", encodingOf("another-key", &rec), rec.MAC); ks != nil {
		t.Error("bob's record under another store key: taken as checked")
	}

	// Through Load: a changed record is refused though its version
	// before the change checked, and the true one restored is admitted.
	forged := rec.clone()
	forged.Username = "admin"
	commit(t, rs, bob.key, forged)
	if got, ok := load(t, m, bobCookie); ok {
		t.Fatalf("a changed record was accepted after its first version checked: user %q", got.Username)
	}
	commit(t, rs, bob.key, rec)
	if got, ok := load(t, m, bobCookie); !ok || got.Username != "bob" {
		t.Fatalf("the true record restored: %v %v", got, ok)
	}

	// Revoked: not found, whatever was checked before.
	if err := m.Revoke(ctx, bob); err != nil {
		t.Fatal(err)
	}
	if _, ok := load(t, m, bobCookie); ok {
		t.Fatal("a revoked session was admitted")
	}
}

// TestVerifiedCacheBounded: the cache never holds more than maxVerified
// versions.
func TestVerifiedCacheBounded(t *testing.T) {
	var c verifiedCache
	ks := &keyset{}
	for i := range maxVerified + 10 {
		c.add(string(rune(i)), []byte("enc"), []byte("mac"), ks)
	}
	if n := c.len(); n > maxVerified {
		t.Fatalf("%d entries, bound %d", n, maxVerified)
	}
}

// encodingOf is the encoding whose MAC rec carries under key.
func encodingOf(key string, rec *Record) []byte {
	return appendRecord([]byte(recordMACPrefix), key, rec)
}

func TestEqualWords(t *testing.T) {
	base := []byte("0123456789abcdefghijklmnopqrstuvwxyz")
	for n := range len(base) + 1 {
		a := base[:n]
		if !equalWords(a, bytes.Clone(a)) {
			t.Fatalf("%q: not equal to itself", a)
		}
		for i := range n {
			b := bytes.Clone(a)
			b[i] ^= 0x80
			if equalWords(a, b) {
				t.Fatalf("%q and %q: equal", a, b)
			}
		}
		if n < len(base) && equalWords(a, base[:n+1]) {
			t.Fatalf("lengths %d and %d: equal", n, n+1)
		}
	}
}
