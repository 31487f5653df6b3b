package password

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/testkit/clocktest"

	"golang.org/x/crypto/bcrypt"
)

// countingVerifier returns a verifier whose bcrypt is counted; it still
// computes real bcrypt, so tests use MinCost hashes.
func countingVerifier(o VerifierOptions) (*Verifier, *atomic.Int64) {
	v := NewVerifier(o)
	var n atomic.Int64
	v.compare = func(h, pw []byte) error {
		n.Add(1)
		return bcrypt.CompareHashAndPassword(h, pw)
	}
	return v, &n
}

func mustHash(t testing.TB, pw string) string {
	t.Helper()
	h, err := Hash([]byte(pw), MinCost)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestCheck(t *testing.T) {
	pw72 := strings.Repeat("k", MaxLen)
	h72 := mustHash(t, pw72)
	if bcrypt.CompareHashAndPassword([]byte(h72), []byte(pw72+"X")) != nil {
		t.Log("note: this bcrypt no longer ignores bytes past 72")
	}
	hOK := mustHash(t, "s3cret-Backup!")
	tests := []struct {
		name    string
		stored  string
		pw      string
		bcrypt  bool
		want    bool
		wantErr error
	}{
		{"bcrypt right", hOK, "s3cret-Backup!", true, true, nil},
		{"bcrypt wrong", hOK, "s3cret-backup!", true, false, nil},
		{"bcrypt empty password", hOK, "", true, false, nil},
		{"bcrypt 72 bytes", h72, pw72, true, true, nil},
		{"bcrypt 73 bytes with right prefix", h72, pw72 + "X", true, false, nil},
		{"bcrypt 71 bytes", h72, pw72[:71], true, false, nil},
		{"bcrypt malformed stored", "not-a-hash", "whatever", true, false, ErrMalformedHash},
		{"bcrypt plain value stored", "s3cret-Backup!", "s3cret-Backup!", true, false, ErrMalformedHash},
		{"plain right", "s3cret-Backup!", "s3cret-Backup!", false, true, nil},
		{"plain wrong", "s3cret-Backup!", "s3cret-Backup?", false, false, nil},
		{"plain prefix", "s3cret-Backup!", "s3cret", false, false, nil},
		{"plain longer", "s3cret-Backup!", "s3cret-Backup!!", false, false, nil},
		{"plain empty stored and password", "", "", false, false, nil},
		{"plain long password", strings.Repeat("z", 200), strings.Repeat("z", 200), false, true, nil},
		{"plain hash given as password", hOK, hOK, false, true, nil},
	}
	v := NewVerifier(VerifierOptions{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ok, err := NewMatcher(tt.bcrypt, v).Match(context.Background(), tt.stored, []byte(tt.pw))
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if ok != tt.want {
				t.Fatalf("ok = %v, want %v", ok, tt.want)
			}
			if err != nil && strings.Contains(err.Error(), tt.stored) {
				t.Fatalf("error %q echoes the stored value", err)
			}
		})
	}
}

func TestCacheHitAvoidsBcrypt(t *testing.T) {
	h := mustHash(t, "pw")
	v, calls := countingVerifier(VerifierOptions{})
	ctx := context.Background()
	for i := range 5 {
		if ok, err := v.Check(ctx, h, []byte("pw")); !ok || err != nil {
			t.Fatalf("check %d: %v, %v", i, ok, err)
		}
	}
	if n := calls.Load(); n != 1 {
		t.Fatalf("bcrypt ran %d times for 5 checks, want 1", n)
	}
	// The same password against another hash is another entry.
	h2 := mustHash(t, "pw")
	if ok, _ := v.Check(ctx, h2, []byte("pw")); !ok || calls.Load() != 2 {
		t.Fatalf("other hash: ok=%v, calls=%d; want true, 2", ok, calls.Load())
	}
	// A cached success never admits a different password.
	if ok, _ := v.Check(ctx, h, []byte("pW")); ok {
		t.Fatal("a different password matched through the cache")
	}
}

func TestCacheDisabled(t *testing.T) {
	h := mustHash(t, "pw")
	v, calls := countingVerifier(VerifierOptions{CacheSize: -1})
	for range 3 {
		if ok, err := v.Check(context.Background(), h, []byte("pw")); !ok || err != nil {
			t.Fatalf("Check = %v, %v", ok, err)
		}
	}
	if n := calls.Load(); n != 3 {
		t.Fatalf("bcrypt ran %d times, want 3", n)
	}
}

func TestFailuresNotCached(t *testing.T) {
	h := mustHash(t, "pw")
	v, calls := countingVerifier(VerifierOptions{})
	for range 3 {
		if ok, err := v.Check(context.Background(), h, []byte("wrong")); ok || err != nil {
			t.Fatalf("Check = %v, %v", ok, err)
		}
	}
	if n := calls.Load(); n != 3 {
		t.Fatalf("bcrypt ran %d times for 3 wrong guesses, want 3", n)
	}
	if l := v.cache.len(); l != 0 {
		t.Fatalf("cache holds %d entries after failures, want 0", l)
	}
}

func TestCacheTTL(t *testing.T) {
	clock := clocktest.New(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
	h := mustHash(t, "pw")
	v, calls := countingVerifier(VerifierOptions{CacheTTL: time.Minute, Now: clock.Now})
	steps := []struct {
		advance   time.Duration
		wantCalls int64
	}{
		{0, 1},                // computed
		{59 * time.Second, 1}, // still cached: use does not extend it
		{time.Second, 2},      // exactly TTL after computing: expired, recomputed
		{30 * time.Second, 2}, // cached again from the recomputation
		{31 * time.Second, 3}, // expired again
	}
	for i, s := range steps {
		clock.Advance(s.advance)
		if ok, err := v.Check(context.Background(), h, []byte("pw")); !ok || err != nil {
			t.Fatalf("step %d: Check = %v, %v", i, ok, err)
		}
		if n := calls.Load(); n != s.wantCalls {
			t.Fatalf("step %d: bcrypt calls = %d, want %d", i, n, s.wantCalls)
		}
	}
	if d := NewVerifier(VerifierOptions{}).cache.ttl; d != DefaultCacheTTL {
		t.Fatalf("default TTL = %v, want %v", d, DefaultCacheTTL)
	}
}

func TestCacheEviction(t *testing.T) {
	h := mustHash(t, "pw")
	v := NewVerifier(VerifierOptions{CacheSize: 3})
	var calls atomic.Int64
	v.compare = func([]byte, []byte) error { calls.Add(1); return nil } // every password "matches"
	check := func(pw string) {
		t.Helper()
		if ok, err := v.Check(context.Background(), h, []byte(pw)); !ok || err != nil {
			t.Fatalf("Check(%s) = %v, %v", pw, ok, err)
		}
	}
	for i := range 10 {
		check(fmt.Sprint("p", i))
		if l := v.cache.len(); l > 3 {
			t.Fatalf("cache holds %d entries, bound is 3", l)
		}
	}
	tests := []struct {
		pw        string
		wantCalls int64
	}{
		{"p9", 10}, // most recent: cached
		{"p7", 10}, // still cached, now most recent
		{"p10", 11},
		{"p7", 11}, // survived because it was used
		{"p8", 12}, // least recently used: evicted by p10
		{"p0", 13}, // evicted long ago
	}
	for _, tt := range tests {
		check(tt.pw)
		if n := calls.Load(); n != tt.wantCalls {
			t.Fatalf("after %s: bcrypt calls = %d, want %d", tt.pw, n, tt.wantCalls)
		}
	}
	if d := NewVerifier(VerifierOptions{}).cache.max; d != DefaultCacheSize {
		t.Fatalf("default size = %d, want %d", d, DefaultCacheSize)
	}
}

func TestPurge(t *testing.T) {
	h := mustHash(t, "pw")
	v, calls := countingVerifier(VerifierOptions{})
	ctx := context.Background()
	v.Check(ctx, h, []byte("pw"))
	v.Purge()
	if l := v.cache.len(); l != 0 {
		t.Fatalf("cache holds %d entries after Purge", l)
	}
	v.Check(ctx, h, []byte("pw"))
	if n := calls.Load(); n != 2 {
		t.Fatalf("bcrypt calls = %d, want 2 (Purge must force a recomputation)", n)
	}
	NewVerifier(VerifierOptions{CacheSize: -1}).Purge() // no cache: no effect, no panic
}

func TestPurgeDuringComputation(t *testing.T) {
	h := mustHash(t, "pw")
	v := NewVerifier(VerifierOptions{})
	entered, release := make(chan struct{}), make(chan struct{})
	v.compare = func(hh, pw []byte) error {
		close(entered)
		<-release
		return bcrypt.CompareHashAndPassword(hh, pw)
	}
	done := make(chan bool)
	go func() {
		ok, _ := v.Check(context.Background(), h, []byte("pw"))
		done <- ok
	}()
	<-entered
	v.Purge()
	close(release)
	if !<-done {
		t.Fatal("Check = false, want true")
	}
	if l := v.cache.len(); l != 0 {
		t.Fatalf("a verification started before Purge was cached after it (%d entries)", l)
	}
}

// holdingVerifier counts bcrypt calls and holds each one until release is
// closed; joined receives a value each time a check has joined a
// computation, so tests line callers up without sleeping.
func holdingVerifier(o VerifierOptions) (v *Verifier, calls *atomic.Int64, joined chan struct{}, release chan struct{}) {
	v = NewVerifier(o)
	calls, joined, release = new(atomic.Int64), make(chan struct{}, 64), make(chan struct{})
	v.compare = func(h, pw []byte) error {
		calls.Add(1)
		<-release
		return bcrypt.CompareHashAndPassword(h, pw)
	}
	v.joined = func() { joined <- struct{}{} }
	return v, calls, joined, release
}

// await receives n values from ch.
func await(ch <-chan struct{}, n int) {
	for range n {
		<-ch
	}
}

func TestSingleflight(t *testing.T) {
	h := mustHash(t, "pw")
	for _, tc := range []struct {
		pw   string
		want bool
	}{{"pw", true}, {"wrong", false}} {
		t.Run(tc.pw, func(t *testing.T) {
			const n = 8
			v, calls, joined, release := holdingVerifier(VerifierOptions{})
			results := make(chan bool, n)
			for range n {
				go func() {
					ok, err := v.Check(context.Background(), h, []byte(tc.pw))
					results <- ok && err == nil
				}()
			}
			await(joined, n)
			close(release)
			for range n {
				if got := <-results; got != tc.want {
					t.Fatalf("Check = %v, want %v", got, tc.want)
				}
			}
			if c := calls.Load(); c != 1 {
				t.Fatalf("%d concurrent checks ran bcrypt %d times, want 1", n, c)
			}
		})
	}
}

func TestFollowerOutlivesCancelledLeader(t *testing.T) {
	h := mustHash(t, "pw")
	gate := NewGate(1)
	v, calls, joined, release := holdingVerifier(VerifierOptions{Gate: gate})
	close(release)
	// Fill the gate so the leader waits for a slot.
	blocker, unblock := make(chan struct{}), make(chan struct{})
	go gate.Do(context.Background(), func() { close(blocker); <-unblock })
	<-blocker

	leaderCtx, cancel := context.WithCancel(context.Background())
	leaderErr := make(chan error, 1)
	go func() {
		_, err := v.Check(leaderCtx, h, []byte("pw"))
		leaderErr <- err
	}()
	await(joined, 1)
	follower := make(chan bool, 1)
	go func() {
		ok, err := v.Check(context.Background(), h, []byte("pw"))
		follower <- ok && err == nil
	}()
	await(joined, 1)
	cancel()
	if err := <-leaderErr; !errors.Is(err, context.Canceled) {
		t.Fatalf("leader err = %v, want context.Canceled", err)
	}
	await(joined, 1) // the follower retried and leads a new computation
	close(unblock)
	if !<-follower {
		t.Fatal("follower did not verify after the leader gave up")
	}
	if c := calls.Load(); c != 1 {
		t.Fatalf("bcrypt calls = %d, want 1", c)
	}
}

func TestCheckBusy(t *testing.T) {
	h := mustHash(t, "pw")
	gate := NewGate(1)
	v, calls := countingVerifier(VerifierOptions{Gate: gate})
	blocker, unblock := make(chan struct{}), make(chan struct{})
	go gate.Do(context.Background(), func() { close(blocker); <-unblock })
	<-blocker
	defer close(unblock)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	ok, err := v.Check(ctx, h, []byte("pw"))
	if ok || !isContextErr(err) {
		t.Fatalf("Check on a full gate with an ended context = %v, %v; want false and a context error", ok, err)
	}
	if err := v.CheckDecoy(ctx, MinCost, []byte("pw")); !isContextErr(err) {
		t.Fatalf("CheckDecoy = %v, want a context error", err)
	}
	if c := calls.Load(); c != 0 {
		t.Fatalf("bcrypt ran %d times for abandoned checks", c)
	}
}

func TestCheckDecoy(t *testing.T) {
	v, calls := countingVerifier(VerifierOptions{})
	ctx := context.Background()
	for _, pw := range []string{"", "guess", strings.Repeat("g", MaxLen)} {
		if err := v.CheckDecoy(ctx, MinCost, []byte(pw)); err != nil {
			t.Fatalf("CheckDecoy: %v", err)
		}
	}
	if c := calls.Load(); c != 3 {
		t.Fatalf("CheckDecoy ran bcrypt %d times for 3 calls, want 3", c)
	}
	// Past MaxLen a real check stops before bcrypt; so does the decoy.
	if err := v.CheckDecoy(ctx, MinCost, []byte(strings.Repeat("g", MaxLen+1))); err != nil {
		t.Fatalf("CheckDecoy: %v", err)
	}
	if c := calls.Load(); c != 3 {
		t.Fatalf("CheckDecoy ran bcrypt for a password past MaxLen")
	}
	if l := v.cache.len(); l != 0 {
		t.Fatalf("CheckDecoy left %d cache entries", l)
	}
}
