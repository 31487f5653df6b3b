package passkey

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/session"
	"github.com/backupweb/backupweb/internal/testkit/clocktest"
)

// TestCeremonyPreviousKey: a ceremony begun under the previous key is
// finished by ceremonies that accept it, once; one begun under a key
// neither holds is not.
func TestCeremonyPreviousKey(t *testing.T) {
	ctx := context.Background()
	newKey := bytes.Repeat([]byte("n"), 32)
	otherKey := bytes.Repeat([]byte("x"), 32)
	for _, tc := range []struct {
		name  string
		begun []byte
		ok    bool
	}{
		{"previous key", testKey, true},
		{"current key", newKey, true},
		{"neither key", otherKey, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := clocktest.New(time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC))
			store := session.NewMemoryStore(clock.Now)
			before, err := NewCeremonies(store, tc.begun, nil, clock.Now)
			if err != nil {
				t.Fatal(err)
			}
			id, err := before.put(ctx, ceremony{Kind: kindLogin, User: "alice", Next: "/x"})
			if err != nil {
				t.Fatal(err)
			}
			after, err := NewCeremonies(store, newKey, nil, clock.Now)
			if err != nil {
				t.Fatal(err)
			}
			if err := after.AcceptPrevious(testKey); err != nil {
				t.Fatal(err)
			}
			s := &Service{o: Options{Ceremonies: after}}
			c, v, err := s.take(ctx, id, kindLogin, "alice")
			if err != nil || v.OK != tc.ok || tc.ok && c.Next != "/x" {
				t.Fatalf("take = %+v, %+v, %v; want ok %v", c, v, err, tc.ok)
			}
			if _, v, _ := s.take(ctx, id, kindLogin, "alice"); v.OK {
				t.Error("a ceremony was taken twice")
			}
		})
	}
}
