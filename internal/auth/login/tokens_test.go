package login_test

import (
	"net/http/httptest"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/testkit/logintest"
	"github.com/backupweb/backupweb/internal/tokens"
)

// TestTokenRecheck: a long-lived request made with a token (a proxied
// WebSocket) stays good while the token does, and is cut once the token
// is revoked, expires, or its user leaves the user file.
func TestTokenRecheck(t *testing.T) {
	h := logintest.New(t, nil)
	secret, tok, err := h.P.CreateToken("alice", "ws", time.Hour, tokens.Scope{}, "test")
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest("GET", "/app/socket", nil)
	req.Header.Set("Authorization", "Bearer "+secret)
	u, ok, err := h.P.Identify(req)
	if err != nil || !ok || u.Name != "alice" || u.SecondFactor != "" || u.HasSession() {
		t.Fatalf("Identify: %+v %v %v", u, ok, err)
	}
	check := h.P.Recheck(req, u)
	if ok, err := check(req.Context()); !ok || err != nil {
		t.Fatalf("recheck of a good token: %v %v", ok, err)
	}
	h.Clock.Advance(2 * time.Hour)
	if ok, _ := check(req.Context()); ok {
		t.Fatal("recheck of an expired token said yes")
	}
	h.Clock.Advance(-2 * time.Hour)
	if err := h.P.RevokeToken(req.Context(), "alice", tok.ID, "test"); err != nil {
		t.Fatal(err)
	}
	if ok, _ := check(req.Context()); ok {
		t.Fatal("recheck of a revoked token said yes")
	}
	if _, ok, _ := h.P.Identify(req); ok {
		t.Fatal("a revoked token identifies")
	}
	// Another user's token is not theirs to revoke.
	_, other, err := h.P.CreateToken("alice", "other", 0, tokens.Scope{}, "test")
	if err != nil {
		t.Fatal(err)
	}
	if err := h.P.RevokeToken(req.Context(), "bob", other.ID, "test"); err == nil {
		t.Fatal("bob revoked alice's token")
	}
	if list := h.P.Tokens().Of("alice"); len(list) != 1 || list[0].ID != other.ID {
		t.Fatalf("alice's tokens: %+v", list)
	}
}
