package basic_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/testkit"
	"github.com/backupweb/backupweb/internal/testkit/clocktest"
)

// TestLimitHoldsUnderConcurrency sends 60 wrong passwords from one address
// at once (released together by a barrier): no more than max_failures of
// them may get a verdict (401), the rest are refused with 429.
func TestLimitHoldsUnderConcurrency(t *testing.T) {
	// A real bcrypt check, so that the guesses are in flight together.
	hash := testkit.HashCost(t, "pw", 8)
	ini := "[authentication]\ntype = basic\nusername = api\npassword = ${HASH}\nuse_bcrypt = true\nmax_failures = 5\n"
	s := start(t, ini, map[string]string{"HASH": hash})
	const n = 60
	statuses := burst(t, s.URL, n, func(_ int, r *http.Request) { r.SetBasicAuth("api", "wrong") })
	t.Logf("%d parallel wrong passwords: %v", n, statuses)
	if statuses[401] > 5 || statuses[401]+statuses[429]+statuses[503] != n || statuses[401] == 0 {
		t.Fatalf("statuses %v: at most 5 verdicts (401) may be given, the rest 429 (or 503 while bcrypt work is saturated)", statuses)
	}
}

// TestFloodLogsBounded floods one address with wrong passwords for ten
// seconds of (injected) time: the log gets a line per verdict and one for
// the start of the block, not one per refused request.
func TestFloodLogsBounded(t *testing.T) {
	clock := clocktest.New(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	ini := "[authentication]\ntype = basic\nusername = api\npassword = pw\nmax_failures = 5\nfailure_window = 5s\n"
	s := startEnv(t, ini, nil, auth.Deps{Now: clock.Now})
	sent := 0
	for elapsed := time.Duration(0); elapsed < 10*time.Second; elapsed += 20 * time.Millisecond {
		resp := s.get(t, "/api/me", basicAuth("api", "wrong"))
		resp.Body.Close()
		sent++
		clock.Advance(20 * time.Millisecond)
	}
	refused := strings.Count(s.logs.String(), "auth refused")
	ended := strings.Count(s.logs.String(), "auth throttling block ended")
	// 5s blocks doubling: at most a handful of blocks in ten seconds, each
	// with 5 verdicts and one opening line.
	if refused > 20 || ended < 1 {
		t.Fatalf("%d requests wrote %d refusal lines and %d block-end lines:\n%s", sent, refused, ended, s.logs)
	}
	if !strings.Contains(s.logs.String(), "refused=") {
		t.Error("the block-end line does not count the refused requests")
	}
}

// TestReloadLiftsBlocks: SIGHUP (Reload) lets a locked-out client in.
func TestReloadLiftsBlocks(t *testing.T) {
	ini := "[authentication]\ntype = basic\nusername = api\npassword = pw\nmax_failures = 2\n"
	s := start(t, ini, nil)
	for range 2 {
		s.get(t, "/api/me", basicAuth("api", "wrong"))
	}
	if got := s.get(t, "/api/me", basicAuth("api", "pw")).StatusCode; got != 429 {
		t.Fatalf("blocked client: %d, want 429", got)
	}
	if err := s.p.(auth.Reloader).Reload(); err != nil {
		t.Fatal(err)
	}
	if got := s.get(t, "/api/me", basicAuth("api", "pw")).StatusCode; got != 200 {
		t.Fatalf("after the reload: %d, want 200", got)
	}
	if !strings.Contains(s.logs.String(), "blocks_cleared=1") || !strings.Contains(s.logs.String(), "credential cache emptied") {
		t.Errorf("the reload is not logged with the blocks cleared:\n%s", s.logs)
	}
}

// TestRightPasswordIsNotCounted: a client that keeps sending the right
// password is never blocked, whatever max_failures is.
func TestRightPasswordIsNotCounted(t *testing.T) {
	s := start(t, "[authentication]\ntype = basic\nusername = api\npassword = pw\nmax_failures = 2\n", nil)
	for i := range 20 {
		if got := s.get(t, "/api/me", basicAuth("api", "pw")).StatusCode; got != 200 {
			t.Fatalf("request %d with the right password: %d", i, got)
		}
	}
}
