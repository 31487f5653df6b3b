// Package storetest is the conformance test of userstate.Store: every
// implementation runs Run, with two instances over one state (two
// processes' views of the same files, or two clients of the same Redis),
// so the races it runs are the races of several instances.
package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/factors"
	"github.com/backupweb/backupweb/internal/testkit"
	"github.com/backupweb/backupweb/internal/tokens"
	"github.com/backupweb/backupweb/internal/userstate"
)

// Secret is the secret key the harness's factors.Keys are made from.
var Secret = []byte("0123456789abcdef0123456789abcdef0123456789abcdef")

// Harness is one fresh, empty state seen through two instances.
type Harness struct {
	// A and B are two instances over the same state.
	A, B userstate.Store
	// Keys are the factors keys both were made with (from Secret).
	Keys *factors.Keys
	// Corrupt damages user's stored factors record so that it no longer
	// reads (a torn line, a MAC that fails).
	Corrupt func(t *testing.T, user string)
}

// Run runs the conformance test over the state open makes, once per
// subtest.
func Run(t *testing.T, open func(t *testing.T) Harness) {
	tests := []struct {
		name string
		fn   func(*testing.T, Harness)
	}{
		{"factors round trip", testRoundTrip},
		{"edit refused or unchanged stores nothing", testEditNothing},
		{"reset", testReset},
		{"recovery code spent once", testRecoveryOnce},
		{"same sign count raced", testSameCount},
		{"high and low count raced", testHighLow},
		{"zero counts", testZeroCount},
		{"unknown passkey", testUnknownPasskey},
		{"concurrent edits lose nothing", testConcurrentEdits},
		{"broken record", testBroken},
		{"tokens", testTokens},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, open(t)) })
	}
}

// NewKeys returns the factors keys of Secret.
func NewKeys(t testing.TB) *factors.Keys {
	k, err := factors.NewKeys(Secret)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

var ctx = context.Background()

// credential returns go-webauthn-shaped JSON for id at count.
func credential(id []byte, count uint32) json.RawMessage {
	b, _ := json.Marshal(map[string]any{"id": id, "publicKey": []byte("pk"), "authenticator": map[string]any{"signCount": count}})
	return b
}

// enrol gives user a TOTP secret, recovery codes and a handle; it returns
// the codes.
func enrol(t *testing.T, h Harness, s userstate.Store, user string) []string {
	t.Helper()
	codes, hashes := h.Keys.NewRecoveryCodes(user)
	err := s.EditFactors(ctx, user, func(r *factors.Record) error {
		r.TOTP = &factors.TOTP{Sealed: h.Keys.SealTOTP(user, "JBSWY3DPEHPK3PXP"), Added: time.Unix(1e9, 0).UTC()}
		r.Recovery = hashes
		if len(r.Handle) == 0 {
			r.Handle = factors.NewHandle()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return codes
}

// addPasskey gives user a passkey id at count.
func addPasskey(t *testing.T, s userstate.Store, user string, id []byte, count uint32) {
	t.Helper()
	err := s.EditFactors(ctx, user, func(r *factors.Record) error {
		if len(r.Handle) == 0 {
			r.Handle = factors.NewHandle()
		}
		r.Passkeys = append(r.Passkeys, factors.Passkey{Name: "key", Created: time.Unix(1e9, 0).UTC(), ID: id, Credential: credential(id, count)})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// storedCount reads the sign count of user's passkey id through s.
func storedCount(t *testing.T, s userstate.Store, user string, id []byte) uint32 {
	t.Helper()
	rec, err := s.Factors(ctx, user)
	if err != nil || rec == nil {
		t.Fatalf("Factors(%s) = %v, %v", user, rec, err)
	}
	for _, p := range rec.Passkeys {
		if string(p.ID) == string(id) {
			n, err := userstate.SignCount(p.Credential)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatalf("user %s has no passkey %x", user, id)
	return 0
}

func status(t *testing.T, s userstate.Store, user string) factors.Status {
	t.Helper()
	st, err := s.Status(ctx, user)
	if err != nil {
		t.Fatalf("Status(%s): %v", user, err)
	}
	return st
}

// waitStatus waits until s says user's status is want: a shared store's
// cached status ends when the store's invalidation arrives, a round trip
// after the change.
func waitStatus(t *testing.T, s userstate.Store, user string, want factors.Status) {
	t.Helper()
	var got factors.Status
	testkit.WaitUntil(t, time.Second, func() bool { got = status(t, s, user); return got == want },
		func() string { return fmt.Sprintf("status of %s is %v, want %v", user, got, want) })
}

func testRoundTrip(t *testing.T, h Harness) {
	if rec, err := h.A.Factors(ctx, "alice"); rec != nil || err != nil {
		t.Fatalf("a fresh store: Factors = %v, %v", rec, err)
	}
	if st := status(t, h.B, "alice"); st != factors.None {
		t.Fatalf("a fresh store: Status = %v", st)
	}
	enrol(t, h, h.A, "alice")
	for _, s := range []userstate.Store{h.A, h.B} {
		waitStatus(t, s, "alice", factors.Enrolled)
		secret, err := userstate.TOTPSecret(ctx, s, h.Keys, "alice")
		if err != nil || secret != "JBSWY3DPEHPK3PXP" {
			t.Fatalf("TOTPSecret = %q, %v", secret, err)
		}
		if st := status(t, s, "bob"); st != factors.None {
			t.Fatalf("bob: Status = %v", st)
		}
	}
	rec, err := h.B.Factors(ctx, "alice")
	if err != nil || rec == nil || rec.User != "alice" || len(rec.Recovery) != factors.RecoveryCount {
		t.Fatalf("Factors = %+v, %v", rec, err)
	}
	user, ok, err := h.B.Owner(ctx, rec.Handle)
	if err != nil || !ok || user != "alice" {
		t.Fatalf("Owner(alice's handle) = %q, %v, %v", user, ok, err)
	}
	if _, ok, _ := h.B.Owner(ctx, factors.NewHandle()); ok {
		t.Fatal("Owner of an unknown handle found someone")
	}
	users, err := h.B.Users(ctx)
	if err != nil || !slices.Equal(users, []string{"alice"}) {
		t.Fatalf("Users = %v, %v", users, err)
	}
	// A name with the characters a key treats specially is its own user.
	enrol(t, h, h.A, "{al}ice%")
	waitStatus(t, h.B, "{al}ice%", factors.Enrolled)
	users, _ = h.A.Users(ctx)
	slices.Sort(users)
	if !slices.Equal(users, []string{"alice", "{al}ice%"}) {
		t.Fatalf("Users = %v", users)
	}
}

func testEditNothing(t *testing.T, h Harness) {
	refuse := errors.New("refused")
	if err := h.A.EditFactors(ctx, "alice", func(r *factors.Record) error {
		r.TOTP = &factors.TOTP{Sealed: h.Keys.SealTOTP("alice", "JBSWY3DPEHPK3PXP")}
		return refuse
	}); !errors.Is(err, refuse) {
		t.Fatalf("EditFactors = %v, want fn's error", err)
	}
	if err := h.A.EditFactors(ctx, "alice", func(r *factors.Record) error {
		r.TOTP = &factors.TOTP{Sealed: h.Keys.SealTOTP("alice", "JBSWY3DPEHPK3PXP")}
		return userstate.ErrUnchanged
	}); err != nil {
		t.Fatalf("EditFactors with ErrUnchanged = %v", err)
	}
	if rec, err := h.B.Factors(ctx, "alice"); rec != nil || err != nil {
		t.Fatalf("after refused edits: Factors = %+v, %v", rec, err)
	}
}

func testReset(t *testing.T, h Harness) {
	enrol(t, h, h.A, "alice")
	rec, _ := h.A.Factors(ctx, "alice")
	gone, err := h.B.ResetFactors(ctx, "alice")
	if err != nil || !gone {
		t.Fatalf("ResetFactors = %v, %v", gone, err)
	}
	waitStatus(t, h.A, "alice", factors.None)
	if _, ok, _ := h.A.Owner(ctx, rec.Handle); ok {
		t.Fatal("after reset: the old handle still names alice")
	}
	if gone, err := h.A.ResetFactors(ctx, "alice"); gone || err != nil {
		t.Fatalf("second ResetFactors = %v, %v", gone, err)
	}
}

// race runs n calls of fn at once (on A and B in turn) and returns how
// many returned nil, and the errors of the others.
func race(n int, h Harness, fn func(s userstate.Store, i int) error) (int, []error) {
	var wg sync.WaitGroup
	start := make(chan struct{})
	errs := make([]error, n)
	for i := range n {
		s := h.A
		if i%2 == 1 {
			s = h.B
		}
		wg.Go(func() {
			<-start
			errs[i] = fn(s, i)
		})
	}
	close(start)
	wg.Wait()
	ok := 0
	var failed []error
	for _, err := range errs {
		if err == nil {
			ok++
		} else {
			failed = append(failed, err)
		}
	}
	return ok, failed
}

func testRecoveryOnce(t *testing.T, h Harness) {
	codes := enrol(t, h, h.A, "alice")
	var mu sync.Mutex
	used := 0
	_, errs := race(8, h, func(s userstate.Store, _ int) error {
		ok, err := userstate.UseRecovery(ctx, s, h.Keys, "alice", codes[3])
		if ok {
			mu.Lock()
			used++
			mu.Unlock()
		}
		return err
	})
	if len(errs) > 0 || used != 1 {
		t.Fatalf("one code spent 8 times at once: %d uses succeeded, errors %v; want exactly 1", used, errs)
	}
	rec, _ := h.B.Factors(ctx, "alice")
	if len(rec.Recovery) != factors.RecoveryCount-1 {
		t.Fatalf("%d codes left, want %d", len(rec.Recovery), factors.RecoveryCount-1)
	}
	if ok, err := userstate.UseRecovery(ctx, h.B, h.Keys, "alice", "AAAA-BBBB-CCCC-DDDD"); ok || err != nil {
		t.Fatalf("a wrong code: %v, %v", ok, err)
	}
}

func testSameCount(t *testing.T, h Harness) {
	id := []byte("credential-one")
	addPasskey(t, h.A, "alice", id, 41)
	for round := range 3 {
		next := uint32(42 + round)
		ok, errs := race(8, h, func(s userstate.Store, _ int) error {
			return s.UsePasskey(ctx, "alice", id, next, credential(id, next), time.Now())
		})
		if ok != 1 {
			t.Fatalf("round %d: 8 assertions with count %d raced: %d accepted, want exactly 1", round, next, ok)
		}
		for _, err := range errs {
			if !errors.Is(err, userstate.ErrCountNotAbove) {
				t.Fatalf("a losing assertion: %v, want ErrCountNotAbove", err)
			}
		}
		if got := storedCount(t, h.B, "alice", id); got != next {
			t.Fatalf("stored count %d, want %d", got, next)
		}
	}
}

func testHighLow(t *testing.T, h Harness) {
	id := []byte("credential-two")
	addPasskey(t, h.A, "alice", id, 10)
	prev := uint32(10)
	for round := range 5 {
		high, low := prev+105, prev+6 // both above the stored count
		if round > 0 {
			low = prev - 5 // below the last high: a clone's count
		}
		prev = high
		results := make([]error, 2)
		race(2, h, func(s userstate.Store, i int) error {
			n := []uint32{high, low}[i]
			results[i] = s.UsePasskey(ctx, "alice", id, n, credential(id, n), time.Now())
			return results[i]
		})
		if results[0] != nil {
			t.Fatalf("round %d: the high count %d was refused: %v", round, high, results[0])
		}
		if got := storedCount(t, h.A, "alice", id); got != high {
			t.Fatalf("round %d: stored count %d after %d and %d raced, want %d", round, got, high, low, high)
		}
		if round > 0 && !errors.Is(results[1], userstate.ErrCountNotAbove) {
			t.Fatalf("round %d: the clone's count %d below the stored one: %v, want ErrCountNotAbove", round, low, results[1])
		}
		clone := high - 50
		if err := h.B.UsePasskey(ctx, "alice", id, clone, credential(id, clone), time.Now()); !errors.Is(err, userstate.ErrCountNotAbove) {
			t.Fatalf("round %d: a clone's count %d after %d: %v, want ErrCountNotAbove", round, clone, high, err)
		}
		if err := h.B.UsePasskey(ctx, "alice", id, high, credential(id, high), time.Now()); !errors.Is(err, userstate.ErrCountNotAbove) {
			t.Fatalf("round %d: the same count again: %v, want ErrCountNotAbove", round, err)
		}
	}
}

func testZeroCount(t *testing.T, h Harness) {
	id := []byte("credential-zero")
	addPasskey(t, h.A, "alice", id, 0)
	for i := range 2 {
		if err := h.B.UsePasskey(ctx, "alice", id, 0, credential(id, 0), time.Unix(2e9, 0)); err != nil {
			t.Fatalf("use %d with both counts 0: %v", i, err)
		}
	}
	rec, _ := h.A.Factors(ctx, "alice")
	if !rec.Passkeys[0].LastUsed.Equal(time.Unix(2e9, 0)) {
		t.Fatalf("last use %v, want %v", rec.Passkeys[0].LastUsed, time.Unix(2e9, 0))
	}
	if err := h.A.UsePasskey(ctx, "alice", id, 5, credential(id, 5), time.Now()); err != nil {
		t.Fatalf("a count starting: %v", err)
	}
	if err := h.B.UsePasskey(ctx, "alice", id, 0, credential(id, 0), time.Now()); !errors.Is(err, userstate.ErrCountNotAbove) {
		t.Fatalf("0 after 5: %v, want ErrCountNotAbove", err)
	}
}

func testUnknownPasskey(t *testing.T, h Harness) {
	addPasskey(t, h.A, "alice", []byte("alices"), 1)
	addPasskey(t, h.A, "bob", []byte("bobs"), 1)
	for _, c := range []struct{ user, id string }{{"alice", "nobodys"}, {"alice", "bobs"}, {"carol", "alices"}} {
		if err := h.B.UsePasskey(ctx, c.user, []byte(c.id), 9, credential([]byte(c.id), 9), time.Now()); !errors.Is(err, userstate.ErrNoSuchPasskey) {
			t.Fatalf("%s using %s: %v, want ErrNoSuchPasskey", c.user, c.id, err)
		}
	}
	if got := storedCount(t, h.A, "bob", []byte("bobs")); got != 1 {
		t.Fatalf("bob's count moved to %d", got)
	}
}

func testConcurrentEdits(t *testing.T, h Harness) {
	const n = 8
	ok, errs := race(n, h, func(s userstate.Store, i int) error {
		return s.EditFactors(ctx, "alice", func(r *factors.Record) error {
			if len(r.Handle) == 0 {
				r.Handle = factors.NewHandle()
			}
			id := []byte(fmt.Sprintf("key-%d", i))
			r.Passkeys = append(r.Passkeys, factors.Passkey{Name: string(id), ID: id, Credential: credential(id, uint32(i))})
			return nil
		})
	})
	if ok != n {
		t.Fatalf("%d concurrent edits: %d succeeded: %v", n, ok, errs)
	}
	rec, err := h.B.Factors(ctx, "alice")
	if err != nil || len(rec.Passkeys) != n {
		t.Fatalf("after %d concurrent additions: %d passkeys, %v", n, len(rec.Passkeys), err)
	}
	for i := range n {
		id := []byte(fmt.Sprintf("key-%d", i))
		if got := storedCount(t, h.A, "alice", id); got != uint32(i) {
			t.Fatalf("passkey %s count %d, want %d", id, got, i)
		}
	}
}

func testBroken(t *testing.T, h Harness) {
	enrol(t, h, h.A, "alice")
	enrol(t, h, h.A, "bob")
	h.Corrupt(t, "alice")
	for _, s := range []userstate.Store{h.A, h.B} {
		rec, err := s.Factors(ctx, "alice")
		if !errors.Is(err, userstate.ErrBroken) || rec != nil {
			t.Fatalf("a damaged record: Factors = %v, %v; want ErrBroken, never empty", rec, err)
		}
		if _, err := userstate.TOTPSecret(ctx, s, h.Keys, "alice"); !errors.Is(err, userstate.ErrBroken) {
			t.Fatalf("a damaged record: TOTPSecret error %v, want ErrBroken", err)
		}
		if err := s.EditFactors(ctx, "alice", func(*factors.Record) error { return nil }); !errors.Is(err, userstate.ErrBroken) {
			t.Fatalf("editing a damaged record: %v, want ErrBroken", err)
		}
		if ok, err := userstate.UseRecovery(ctx, s, h.Keys, "alice", "AAAA-BBBB-CCCC-DDDD"); ok || err == nil {
			t.Fatalf("a recovery code of a damaged record: %v, %v; want an error", ok, err)
		}
		if rec, err := s.Factors(ctx, "bob"); err != nil || rec == nil {
			t.Fatalf("bob's record beside a damaged one: %v, %v", rec, err)
		}
	}
	if gone, err := h.B.ResetFactors(ctx, "alice"); err != nil || !gone {
		t.Fatalf("resetting a damaged record: %v, %v", gone, err)
	}
	if rec, err := h.A.Factors(ctx, "alice"); rec != nil || err != nil {
		t.Fatalf("after the reset: %v, %v", rec, err)
	}
}

func testTokens(t *testing.T, h Harness) {
	now := time.Now()
	mk := func(user string, life time.Duration) (string, tokens.Token) {
		tok := tokens.Token{User: user, Label: "backup"}
		secret, err := tokens.New(&tok, now)
		if err != nil {
			t.Fatal(err)
		}
		if life != 0 {
			tok.Expires = now.Add(life)
		}
		if err := h.A.AddToken(ctx, tok); err != nil {
			t.Fatal(err)
		}
		return secret, tok
	}
	s1, t1 := mk("alice", 0)
	s2, _ := mk("alice", time.Hour)
	s3, _ := mk("alice", -10*time.Second)
	sb, tb := mk("bob", 0)
	if err := h.B.AddToken(ctx, t1); err == nil {
		t.Fatal("a token added twice was stored twice")
	}
	for _, c := range []struct {
		secret string
		want   tokens.Status
	}{{s1, tokens.Valid}, {s2, tokens.Valid}, {s3, tokens.Expired}, {sb, tokens.Valid}, {"bwt_" + "x", tokens.Unknown}} {
		got, st, err := h.B.Token(ctx, c.secret)
		if err != nil || st != c.want || st == tokens.Valid && got == nil {
			t.Fatalf("Token = %v, %v, %v; want %v", got, st, err, c.want)
		}
	}
	list, err := h.B.TokensOf(ctx, "alice")
	if err != nil || len(list) != 3 || !slices.ContainsFunc(list, func(x tokens.Token) bool { return x.ID == t1.ID }) {
		t.Fatalf("TokensOf(alice) = %v, %v", list, err)
	}
	if first, again := h.A.TokenUsed(ctx, &t1, "192.0.2.1", now), h.A.TokenUsed(ctx, &t1, "192.0.2.1", now); !first || again {
		t.Fatal("TokenUsed does not tell a new address from a known one")
	}
	if _, err := h.B.RevokeToken(ctx, "bob", t1.ID); !errors.Is(err, tokens.ErrNoToken) {
		t.Fatalf("bob revoking alice's token: %v, want ErrNoToken", err)
	}
	if _, _, err := h.A.Token(ctx, s1); err != nil { // cached on A before the revocation
		t.Fatal(err)
	}
	gone, err := h.B.RevokeToken(ctx, "alice", t1.ID)
	if err != nil || gone.ID != t1.ID {
		t.Fatalf("RevokeToken = %v, %v", gone, err)
	}
	if _, st, _ := h.B.Token(ctx, s1); st != tokens.Unknown {
		t.Fatalf("a revoked token on the instance that revoked it: %v, want unknown at once", st)
	}
	// A shared store's cached copy ends when the store's invalidation
	// arrives (a round trip), not a poll later.
	testkit.WaitUntil(t, time.Second, func() bool {
		_, st, err := h.A.Token(ctx, s1)
		return st == tokens.Unknown && err == nil
	}, func() string { return "a revoked token is still found on the other instance" })
	if _, err := h.A.RevokeToken(ctx, "", t1.ID); !errors.Is(err, tokens.ErrNoToken) {
		t.Fatalf("revoking twice: %v", err)
	}
	if got, err := h.A.RevokeToken(ctx, "", tb.ID); err != nil || got.User != "bob" {
		t.Fatalf("revoking by id alone: %v, %v", got, err)
	}
	n, err := h.A.RevokeTokensOf(ctx, "alice")
	if err != nil || n != 2 {
		t.Fatalf("RevokeTokensOf = %d, %v; want 2", n, err)
	}
	if _, st, _ := h.A.Token(ctx, s2); st != tokens.Unknown {
		t.Fatalf("after RevokeTokensOf, on the instance that revoked: %v", st)
	}
	testkit.WaitUntil(t, time.Second, func() bool {
		_, st, err := h.B.Token(ctx, s2)
		return st == tokens.Unknown && err == nil
	}, func() string { return "a token revoked with its user's is still found on the other instance" })
	if all, err := h.B.AllTokens(ctx); err != nil || len(all) != 0 {
		t.Fatalf("AllTokens = %v, %v", all, err)
	}
}
