// Command loadtest loads the real backupweb program the way users do, on
// loopback, and checks the one rule of its throttle: a request that would
// succeed is never refused because other requests are in flight, and a
// flood of wrong credentials gets at most max_failures wrong verdicts per
// window.
//
// The right-credential scenarios send right credentials over -conns
// parallel keep-alive connections (32 by default) and fail on any answer
// that is not a 2xx (303 for logins), and on any "auth refused" line in
// the server's log:
//
//   - basic: a right Basic password to /api/backups;
//   - session: a valid flask-login session cookie to /api/backups;
//   - forward: /auth/request and /auth/forward, with Basic and with a session;
//   - proxy: the built-in reverse proxy in front of a small upstream this
//     program starts, a page and its 30 assets at once, right password;
//   - logins: 12, then 20, people sign in through the form from one address
//     at the same instant;
//   - redis: basic and session with store = redis, on a redis-server this
//     program starts (skipped when redis-server is missing, failed instead
//     under BACKUPWEB_REQUIRE_TOOLS=1);
//   - cold-start: on a fresh start, the first requests all at one instant;
//     they must share one bcrypt check.
//
// The flood scenarios (flood-basic, flood-login) send wrong credentials
// from 127.0.0.1 while a client at 127.0.0.2 with right credentials
// measures its latency; they report the wrong verdicts (401) against the
// bound and the 429s.
//
// The failover scenario loads running instances instead: -targets names
// their base URLs, -user the name it signs in as, $LOADTEST_PASSWORD its
// password. It signs in on the first target (the valid session), signs in
// and out on the last (the revoked session), prints "failover: loading"
// and then, at -conns connections each to the next target in turn, sends
// the valid session, the revoked one and none to /api/backups while the
// store behind them is made to fail over. It fails on a 2xx without the
// valid session, and on any answer to the valid session other than a 2xx
// or a 503 with Retry-After (a 401 or a cleared cookie is a sign-out);
// it prints the counts; after the load every target must admit the valid
// session and refuse the revoked one. -until-eof also ends the load when
// standard input ends, so that a program driving the fault decides when:
//
//	LOADTEST_PASSWORD=... go run ./internal/cmd/loadtest -targets http://127.0.0.1:8080,http://127.0.0.1:8081 -user alice -duration 60s
//
// It builds ./cmd/backupweb (run it from the module's root), or loads the
// binary named by -bin. Every part is bounded by -duration and
// -max-requests and stops by itself; nothing leaves 127.0.0.1 and
// 127.0.0.2 (Linux routes all of 127.0.0.0/8 to the loopback device).
//
//	go run ./cmd/loadtest                        # every scenario, 10 s a part
//	go run ./cmd/loadtest -scenario basic,logins -duration 3s
//
// It prints one summary line per part (requests, req/s, status counts,
// p50/p99, PASS or FAIL with the reason) and then the line "N passed, N
// failed"; it exits 1 when anything failed, 2 on wrong usage.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"sync/atomic"
	"syscall"
	"time"
)

func main() {
	o, err := parseArgs(os.Args[1:], os.Stderr)
	if errors.Is(err, errHelp) {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "loadtest:", err)
		os.Exit(2)
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sig
		signal.Stop(sig) // a second signal ends the program at once
		fmt.Fprintln(os.Stderr, "loadtest: interrupted: finishing the running part, stopping its servers")
		stopping.Store(true)
	}()
	ok, err := run(o, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "loadtest:", err)
		os.Exit(1)
	}
	if !ok {
		os.Exit(1)
	}
}

// stopping is set by SIGINT or SIGTERM: every loop ends at its next check,
// the servers are stopped, and the scenarios not begun are not run.
var stopping atomic.Bool

// running reports whether a loop bounded by deadline goes on.
func running(deadline time.Time) bool {
	return !stopping.Load() && !loadEnded.Load() && time.Now().Before(deadline)
}

// env is what every scenario shares: the settings, the program to load
// and the folder where servers keep their files.
type env struct {
	opts options
	bin  string
	dir  string
	// out is where the results go; stdin is read by -until-eof.
	out   io.Writer
	stdin io.Reader
}

// scenario is one named way of loading the program; run returns one
// result per part.
type scenario struct {
	name  string
	about string
	run   func(e *env) []*result
}

// scenarios is the table of scenarios, in the order they run.
var scenarios = []scenario{
	{"basic", "right Basic password to /api/backups at -conns connections: only 2xx", runBasic},
	{"session", "valid flask-login session to /api/backups at -conns connections: only 2xx", runSession},
	{"forward", "/auth/request and /auth/forward with Basic and with a session: only 2xx", runForward},
	{"proxy", "built-in proxy, right password, a page and its 30 assets at once: only 2xx", runProxy},
	{"logins", "12, then 20, right logins through the form from one address at once: all 303", runLogins},
	{"redis", "basic and session with store = redis (a redis-server started here): only 2xx", runRedis},
	{"cold-start", "the first -conns requests at the same instant on a fresh start: only 2xx, one bcrypt check", runColdStart},
	{"flood-basic", "wrong Basic passwords from 127.0.0.1, measured from 127.0.0.2: verdicts within max_failures", runFloodBasic},
	{"flood-login", "wrong logins from 127.0.0.1, measured from 127.0.0.2: verdicts within max_failures", runFloodLogin},
	{"failover", "with -targets: a valid session, a revoked one and none through running instances while their store fails over: only 2xx or 503 with Retry-After, only with the valid session", runFailover},
}

// run builds (or takes) the program, runs the chosen scenarios, prints a
// line per part and the tally, and reports whether everything passed.
func run(o options, out io.Writer) (bool, error) {
	dir, err := os.MkdirTemp("", "backupweb-load-")
	if err != nil {
		return false, err
	}
	defer os.RemoveAll(dir)
	e := &env{opts: o, dir: dir, bin: o.bin, out: out, stdin: os.Stdin}
	switch {
	case len(o.targets) > 0:
		// Running instances are loaded: nothing to build or start.
	case e.bin == "":
		e.bin = filepath.Join(dir, "backupweb")
		build := exec.Command("go", "build", "-o", e.bin, "./cmd/backupweb")
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			return false, fmt.Errorf("building ./cmd/backupweb (run from the module's root, or give -bin): %w", err)
		}
	default:
		if e.bin, err = filepath.Abs(e.bin); err != nil {
			return false, fmt.Errorf("-bin: %w", err)
		}
		if _, err := os.Stat(e.bin); err != nil {
			return false, fmt.Errorf("-bin: %w", err)
		}
	}
	var all []*result
	for _, s := range scenarios {
		if !slices.Contains(o.scenarios, s.name) || stopping.Load() {
			continue
		}
		for _, res := range s.run(e) {
			fmt.Fprintln(out, res.line())
			all = append(all, res)
		}
	}
	fmt.Fprintln(out, tally(all))
	if stopping.Load() {
		return false, errors.New("interrupted: the results above are partial")
	}
	for _, r := range all {
		if r.skipped == "" && !r.passed() {
			return false, nil
		}
	}
	return true, nil
}

// failed is a part that could not be run at all (its server did not
// start, a login failed): it fails with err as its reason.
func failed(name string, err error) *result {
	res := &result{name: name, statuses: map[int]int{}}
	res.failf("%v", err)
	return res
}
