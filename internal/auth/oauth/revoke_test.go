package oauth

import (
	"context"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/session"
	"github.com/backupweb/backupweb/internal/testkit"
)

// TestSessionRevokeOnTheFileStore: `backupweb session revoke -user` with a
// file store leaves a request in the state folder; the running oauth
// provider's watch takes it and the user's session is refused at its next
// request, while another user's goes on.
func TestSessionRevokeOnTheFileStore(t *testing.T) {
	w := newWorld(t)
	dir := t.TempDir()
	s := w.serve(t, "generic-oidc", Rule{Domains: []string{"example.com"}}, auth.Deps{StateDir: dir})
	alice, carol := browser(t), browser(t)
	if resp, _ := w.signIn(t, s, alice, "/", "alice"); resp.StatusCode != 200 {
		t.Fatalf("alice's sign-in: %d", resp.StatusCode)
	}
	if resp, _ := w.signIn(t, s, carol, "/", "carol"); resp.StatusCode != 200 {
		t.Fatalf("carol's sign-in: %d", resp.StatusCode)
	}
	u, ok := s.signedInUser(t, alice)
	if !ok {
		t.Fatal("alice is not signed in")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go s.p.Watch(ctx)
	if _, err := session.RequestRevocation(dir, "user", u.Name); err != nil {
		t.Fatal(err)
	}
	testkit.WaitUntil(t, 3*RevocationPoll+5*time.Second, func() bool {
		_, ok := s.signedInUser(t, alice)
		return !ok
	}, func() string { return "alice's session was not ended" })
	if _, ok := s.signedInUser(t, carol); !ok {
		t.Error("carol's session ended too")
	}
}
