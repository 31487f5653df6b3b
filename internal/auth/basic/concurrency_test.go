package basic_test

import (
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/redisstore"
	"github.com/backupweb/backupweb/internal/testkit"
	"github.com/backupweb/backupweb/internal/testkit/logtest"
	"github.com/backupweb/backupweb/internal/testkit/redistest"
)

// checkCounter counts the bcrypt computations of the provider it is
// handed to (auth.Deps.Hooks.Password).
type checkCounter struct{ bcrypt atomic.Int64 }

func (c *checkCounter) BcryptChecked(time.Duration) { c.bcrypt.Add(1) }
func (c *checkCounter) GateWaited(time.Duration)    {}
func (c *checkCounter) CacheLookup(bool)            {}

// burst sends n requests at the same instant over n connections opened
// beforehand, each made by mod(i), and returns the count of each status.
func burst(t *testing.T, url string, n int, mod func(i int, r *http.Request)) map[int]int {
	t.Helper()
	return testkit.Burst(t, n, func(i int) *http.Request {
		req, _ := http.NewRequest("GET", url+"/api/me", nil)
		mod(i, req)
		return req
	})
}

// TestRightPasswordBurst: 24 requests with the right password at the same
// instant on a fresh provider all get 200, and bcrypt ran once (the first
// requests share one check, the others find it cached: no attempt slot is
// taken by them); then 32 parallel clients sending 40 requests each get
// only 200. max_failures is 2, so that reserving slots ahead of the
// verdict, as before, would refuse most of them.
func TestRightPasswordBurst(t *testing.T) {
	hash := testkit.HashCost(t, "pw", 10)
	ini := "[authentication]\ntype = basic\nusername = api\npassword = ${HASH}\nuse_bcrypt = true\nmax_failures = 2\n"
	s := start(t, ini, map[string]string{"HASH": hash})
	right := func(_ int, r *http.Request) { r.SetBasicAuth("api", "pw") }
	statuses := burst(t, s.URL, 24, right)
	if statuses[200] != 24 {
		t.Fatalf("24 right requests at once: %v; want 24 × 200", statuses)
	}
	if n := s.work.bcrypt.Load(); n != 1 {
		t.Fatalf("bcrypt ran %d times for 24 requests with one credential; want once", n)
	}
	total := map[int]int{}
	for range 40 {
		for code, n := range burst(t, s.URL, 32, right) {
			total[code] += n
		}
	}
	t.Logf("32 parallel clients, 40 rounds: %v", total)
	if total[200] != 32*40 {
		t.Fatalf("32 parallel clients with the right password: %v; want only 200", total)
	}
	if strings.Contains(s.logs.String(), "auth refused") {
		t.Errorf("a right credential was logged as refused:\n%s", s.logs)
	}
}

// TestFortyWrongAtOnce: forty different wrong passwords at once from one
// address: at most max_failures verdicts (401), the rest 429; and the
// right password is then refused too, since the address is blocked.
func TestFortyWrongAtOnce(t *testing.T) {
	hash := testkit.HashCost(t, "pw", 8)
	ini := "[authentication]\ntype = basic\nusername = api\npassword = ${HASH}\nuse_bcrypt = true\nmax_failures = 5\n"
	s := start(t, ini, map[string]string{"HASH": hash})
	statuses := burst(t, s.URL, 40, func(i int, r *http.Request) { r.SetBasicAuth("api", "wrong"+strings.Repeat("x", i)) })
	t.Logf("40 parallel wrong passwords: %v", statuses)
	if statuses[401] != 5 || statuses[429] != 35 {
		t.Fatalf("statuses %v: want exactly 5 verdicts (401) and 35 × 429", statuses)
	}
	if got := s.get(t, "/api/me", basicAuth("api", "pw")).StatusCode; got != 429 {
		t.Fatalf("right password from the blocked address: %d, want 429", got)
	}
	if n := strings.Count(s.logs.String(), "auth refused"); n != 6 {
		t.Errorf("%d refusal lines, want 6 (5 verdicts and the block's first refusal):\n%s", n, s.logs)
	}
}

// TestReloadForgetsEverything: SIGHUP (Reload) lifts every block and
// forgets every count, in memory and in Redis alike.
func TestReloadForgetsEverything(t *testing.T) {
	stores := map[string]func(t *testing.T) auth.Deps{
		"memory": func(*testing.T) auth.Deps { return auth.Deps{} },
		"redis": func(t *testing.T) auth.Deps {
			srv := redistest.Start(t, redistest.Options{})
			c, err := redisstore.Open(redisstore.Options(srv.Config()), slog.New(slog.NewTextHandler(&logtest.Buffer{}, nil)))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { c.Close() })
			return auth.Deps{Shared: c}
		},
	}
	for name, deps := range stores {
		t.Run(name, func(t *testing.T) {
			ini := "[authentication]\ntype = basic\nusername = api\npassword = pw\nmax_failures = 3\n"
			s := startEnv(t, ini, nil, deps(t))
			reload := func() {
				if err := s.p.(auth.Reloader).Reload(); err != nil {
					t.Fatal(err)
				}
			}
			status := func(pw string) int { return s.get(t, "/api/me", basicAuth("api", pw)).StatusCode }
			// Two failures, a reload, two more: the count starts again.
			for range 2 {
				status("wrong")
			}
			reload()
			for i := range 2 {
				if got := status("wrong"); got != 401 {
					t.Fatalf("failure %d after the reload: %d, want 401 (the count was forgotten)", i+1, got)
				}
			}
			// Blocked, then lifted.
			status("wrong")
			if got := status("pw"); got != 429 {
				t.Fatalf("blocked: %d, want 429", got)
			}
			reload()
			if got := status("pw"); got != 200 {
				t.Fatalf("after the reload: %d, want 200", got)
			}
			if !strings.Contains(s.logs.String(), "blocks_cleared=1") {
				t.Errorf("the reload does not say it lifted a block:\n%s", s.logs)
			}
		})
	}
}

// TestRedisRightPasswordBurst is TestRightPasswordBurst's first part with
// the counts in Redis.
func TestRedisRightPasswordBurst(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	c, err := redisstore.Open(redisstore.Options(srv.Config()), slog.New(slog.NewTextHandler(&logtest.Buffer{}, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	s := startEnv(t, "[authentication]\ntype = basic\nusername = api\npassword = pw\nmax_failures = 2\n", nil, auth.Deps{Shared: c})
	right := func(_ int, r *http.Request) { r.SetBasicAuth("api", "pw") }
	for range 5 {
		if st := burst(t, s.URL, 32, right); st[200] != 32 {
			t.Fatalf("32 parallel right requests, counts in Redis: %v", st)
		}
	}
	st := burst(t, s.URL, 20, func(i int, r *http.Request) { r.SetBasicAuth("api", "wrong") })
	if st[401] != 2 || st[429] != 18 {
		t.Fatalf("20 parallel wrong passwords, counts in Redis: %v; want 2 × 401 and 18 × 429", st)
	}
}

// TestSameCredentialTakesNoSlot: requests with the credential another
// request is checking wait for that check instead of taking a slot, so
// neither one slot (max_failures = 1) nor a wait far shorter than a bcrypt
// check (attempt_wait = 1ms, as on a machine so loaded that the check
// outlasts the wait) refuses any of them.
func TestSameCredentialTakesNoSlot(t *testing.T) {
	hash := testkit.HashCost(t, "pw", 12)
	ini := "[authentication]\ntype = basic\nusername = api\npassword = ${HASH}\nuse_bcrypt = true\nmax_failures = 1\nattempt_wait = 1ms\n"
	s := start(t, ini, map[string]string{"HASH": hash})
	statuses := burst(t, s.URL, 24, func(_ int, r *http.Request) { r.SetBasicAuth("api", "pw") })
	if statuses[200] != 24 {
		t.Fatalf("24 right requests at once, one slot, a 1 ms wait: %v; want 24 × 200", statuses)
	}
	if n := s.work.bcrypt.Load(); n != 1 {
		t.Fatalf("bcrypt ran %d times; want once", n)
	}
}
