package session

import (
	"net/http/httptest"
	"testing"

	"github.com/backupweb/backupweb/internal/testkit/benchtest"
)

// TestLoadAllocations counts what loading a valid session allocates: the
// store key (a string, needed for the lookup) and the caller's *Session.
// The package's own stores hand the manager their record without copying
// its CSRF secret and MAC (findShared); the id's decoding, the id's HMAC
// and the record's MAC check allocate nothing. A store of another package
// (Find) adds its copies.
func TestLoadAllocations(t *testing.T) {
	if benchtest.RaceEnabled {
		t.Skip("allocation counts differ under the race detector")
	}
	m, err := NewManager(Options{Store: NewMemoryStore(nil), Key: testKey})
	if err != nil {
		t.Fatal(err)
	}
	w := httptest.NewRecorder()
	if _, err := m.Start(w, get(), Data{Username: "alice"}); err != nil {
		t.Fatal(err)
	}
	r := get(cookieNamed(t, w, DefaultCookieName))
	if n := testing.AllocsPerRun(100, func() { m.keyFromRequest(r) }); n != 1 {
		t.Errorf("keyFromRequest: %v allocations, want 1 (the key)", n)
	}
	load := func() {
		if _, ok, err := m.Load(r); !ok || err != nil {
			t.Fatal("session lost")
		}
	}
	if n := testing.AllocsPerRun(100, load); n > 2 {
		t.Errorf("Load: %v allocations, want at most 2", n)
	}
}
