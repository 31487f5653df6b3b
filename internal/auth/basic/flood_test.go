package basic_test

import (
	"fmt"
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

// sharedStores are the places counts and known addresses are kept: this
// process, and a real redis-server.
var sharedStores = map[string]func(t *testing.T) auth.Deps{
	"memory": func(t *testing.T) auth.Deps { return auth.Deps{StateDir: t.TempDir()} },
	"redis": func(t *testing.T) auth.Deps {
		srv := redistest.Start(t, redistest.Options{})
		// The kit's command timeout (500 ms) is shorter than a round trip
		// takes when hundreds of requests and their bcrypt checks share a
		// busy core or two: a command that runs out answers 503 (fail
		// closed), which these tests would take for a throttle's mistake.
		// What they check is the throttle's verdicts, not Redis's speed.
		cfg := srv.Config()
		cfg.CommandTimeout = 30 * time.Second
		c, err := redisstore.Open(redisstore.Options(cfg), slog.New(slog.NewTextHandler(&logtest.Buffer{}, nil)))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return auth.Deps{Shared: c}
	},
}

// getFrom sends GET /api/me from the loopback address ip with user's
// Basic credentials and returns the status (0 when no answer came).
func getFrom(t *testing.T, c *http.Client, url, user, pw string) int {
	t.Helper()
	req, _ := http.NewRequest("GET", url+"/api/me", nil)
	req.SetBasicAuth(user, pw)
	resp, err := c.Do(req)
	if err != nil {
		t.Error(err)
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestManyAddressesOneName: ten wrong passwords for one name from each of
// 30 addresses, all at once, give at most max_user_failures + 10 wrong
// verdicts and not one 503; meanwhile the right password from an address
// that signed in as that name before (known, not cached) gets in; after
// the flood the name is refused at once (429, no bcrypt) from a new
// address, and still admitted from the known one. In memory and in Redis.
func TestManyAddressesOneName(t *testing.T) {
	hash := testkit.HashCost(t, "right-pw", 10)
	ini := "[authentication]\ntype = basic\nusername = ops\npassword = ${HASH}\nuse_bcrypt = true\n"
	for name, deps := range sharedStores {
		t.Run(name, func(t *testing.T) {
			// A clock the test moves past cache_ttl, so that the last sign-in
			// cannot be answered from the verification cache.
			var ahead atomic.Int64
			d := deps(t)
			d.Now = func() time.Time { return time.Now().Add(time.Duration(ahead.Load())) }
			s := startEnv(t, ini, map[string]string{"HASH": hash}, d)
			home := testkit.ClientFrom("127.0.0.200")
			if got := getFrom(t, home, s.URL, "ops", "right-pw"); got != 200 {
				t.Fatalf("first sign-in from 127.0.0.200: %d", got)
			}
			// Empties the verification cache: the sign-in during the flood
			// must pass bcrypt, as after five quiet minutes.
			if err := s.p.(auth.Reloader).Reload(); err != nil {
				t.Fatal(err)
			}
			const addrs, each = 30, 10
			clients := make([]*http.Client, addrs)
			for i := range clients {
				clients[i] = testkit.ClientFrom(fmt.Sprintf("127.0.0.%d", 10+i))
			}
			flood := make(chan map[int]int)
			go func() {
				flood <- testkit.AtOnce(addrs*each, func(i int) func() int {
					c := clients[i%addrs]
					return func() int { return getFrom(t, c, s.URL, "ops", fmt.Sprintf("guess-%d", i)) }
				})
			}()
			testkit.WaitUntil(t, 30*time.Second, func() bool { return strings.Contains(s.logs.String(), `reason="bad credentials"`) }, func() string { return "no wrong verdict logged" })
			start := time.Now()
			right := getFrom(t, home, s.URL, "ops", "right-pw")
			took := time.Since(start)
			statuses := <-flood
			t.Logf("%d × %d wrong passwords at once: %v; the right one from the known address: %d in %s", addrs, each, statuses, right, took)
			if right != 200 {
				t.Errorf("the right password from the known address during the flood: %d, want 200", right)
			}
			if took > 30*time.Second { // generous: the machine may be loaded; the figure is logged
				t.Errorf("the right password from the known address took %s during the flood", took)
			}
			if statuses[401] > basicMaxUser+10 || statuses[503] != 0 || statuses[401]+statuses[429] != addrs*each {
				t.Errorf("statuses %v: want at most %d × 401, the rest 429, no 503; the server's first errors:\n%s", statuses, basicMaxUser+10, firstErrors(s.logs.String(), 5))
			}
			before := s.work.bcrypt.Load()
			stranger := testkit.ClientFrom("127.0.0.250")
			if got := getFrom(t, stranger, s.URL, "ops", "another-guess"); got != 429 {
				t.Errorf("a guess at the blocked name from a new address: %d, want 429", got)
			}
			if n := s.work.bcrypt.Load() - before; n != 0 {
				t.Errorf("a guess at the blocked name ran bcrypt %d times", n)
			}
			// Past cache_ttl, not past the name's block: only the known
			// address lets the right password in now, and bcrypt checks it.
			ahead.Store(int64(6 * time.Minute))
			before = s.work.bcrypt.Load()
			if got := getFrom(t, home, s.URL, "ops", "right-pw"); got != 200 {
				t.Errorf("the right password from the known address after the flood: %d, want 200", got)
			}
			if n := s.work.bcrypt.Load() - before; n != 1 {
				t.Errorf("the right password after cache_ttl ran bcrypt %d times, want once (not from the cache)", n)
			}

		})
	}
}

// basicMaxUser is max_user_failures's default.
const basicMaxUser = 5

// firstErrors returns the first n lines of log that are not INFO or
// DEBUG: why a request got no verdict.
func firstErrors(log string, n int) string {
	var out []string
	for _, line := range strings.Split(log, "\n") {
		if line == "" || strings.Contains(line, "level=INFO") || strings.Contains(line, "level=DEBUG") {
			continue
		}
		if out = append(out, line); len(out) == n {
			break
		}
	}
	return strings.Join(out, "\n")
}
