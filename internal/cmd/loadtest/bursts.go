package main

import (
	"context"
	"fmt"
	"net/http"
	"time"
)

// loginBursts are the sizes of the simultaneous logins: people behind one
// office address who sign in at the same moment.
var loginBursts = []int{12, 20}

// runLogins: for each burst size, on a fresh server, that many people sign
// in through the form from 127.0.0.1 at the same instant, each with the
// right password, again and again for the duration (at least once). Every
// login must answer 303, and the session it set must open /api/me.
func runLogins(e *env) []*result {
	var out []*result
	for _, n := range loginBursts {
		out = append(out, e.loginBurst(fmt.Sprintf("logins %d at once", n), n))
	}
	return out
}

func (e *env) loginBurst(name string, n int) *result {
	s, err := startServer(e.bin, e.dir, sessionSpec("", ""))
	if err != nil {
		return failed(name, err)
	}
	defer s.stop()
	rec := newRecorder()
	var elapsed time.Duration
	rounds, sent, notIn := 0, int64(0), 0
	deadline := time.Now().Add(e.opts.duration)
	for !stopping.Load() && sent+int64(n) <= e.opts.maxRequests && (rounds == 0 || running(deadline)) {
		rounds++
		sent += int64(n)
		clients := clientsFrom("127.0.0.1", n)
		tokens := make([]string, n)
		for i, c := range clients {
			c.Jar = newJar() // each person's own browser
			if tokens[i], err = formToken(c, s.base); err != nil {
				return failed(name, err)
			}
		}
		codes := make([]int, n)
		elapsed += burst(clients, rec, func(i int, c *http.Client) (int, error) {
			user, pw := officeUser(1 + i)
			code, err := postLogin(context.Background(), c, s.base, tokens[i], user, pw)
			codes[i] = code
			return code, err
		})
		for i, c := range clients {
			if codes[i] != http.StatusSeeOther {
				continue // already counted as refused
			}
			if code, err := get(c, s.base+"/api/me", nil); err != nil || code != http.StatusOK {
				notIn++
			}
		}
		closeClients(clients)
	}
	checks, work, err := s.bcryptWork()
	if err != nil {
		return failed(name, err)
	}
	refused := s.stop()
	res := rec.result(name, elapsed)
	res.detail = append(res.detail, fmt.Sprintf("%s of %d people", plural(rounds, "round"), n))
	if checks > 0 {
		// What the logins cost the server: a burst's checks run a few at
		// a time, so their mean shows how long the last one waits.
		res.detail = append(res.detail, fmt.Sprintf("%s, %s each on average", plural(checks, "bcrypt check"), roundLatency(work/time.Duration(checks))))
	}
	checkRight(res, func(code int) bool { return code == http.StatusSeeOther }, "303", refused)
	if notIn > 0 {
		res.failf("%d clients answered 303 could not open /api/me with the session it set", notIn)
	}
	return res
}

// runColdStart: on a fresh start, -conns clients (connections open,
// nothing asked yet) send their first request with alice's right Basic
// password at the same instant, to a protected route and to nginx's
// forward-auth route; fresh starts repeat for the duration (at least
// one). Every answer must be a 2xx, and the concurrent first requests
// must share one bcrypt check (counted in the server's metrics) instead
// of each making its own.
func runColdStart(e *env) []*result {
	return []*result{
		e.coldStart("cold-start basic /api/backups", "/api/backups"),
		e.coldStart("cold-start forward /auth/request", "/auth/request"),
	}
}

func (e *env) coldStart(name, path string) *result {
	rec := newRecorder()
	var elapsed time.Duration
	starts, refused, maxChecks := 0, 0, 0
	var sent int64
	deadline := time.Now().Add(e.opts.duration)
	for !stopping.Load() && sent+int64(e.opts.conns) <= e.opts.maxRequests && (starts == 0 || running(deadline)) {
		starts++
		sent += int64(e.opts.conns)
		s, err := startServer(e.bin, e.dir, basicSpec("", ""))
		if err != nil {
			return failed(name, err)
		}
		clients := clientsFrom("127.0.0.1", e.opts.conns)
		if err := warm(clients, s.base); err != nil {
			s.stop()
			return failed(name, err)
		}
		elapsed += burst(clients, rec, func(_ int, c *http.Client) (int, error) {
			return get(c, s.base+path, withBasic)
		})
		closeClients(clients)
		checks, _, err := s.bcryptWork()
		refused += s.stop()
		if err != nil {
			return failed(name, err)
		}
		maxChecks = max(maxChecks, checks)
	}
	res := rec.result(name, elapsed)
	res.detail = append(res.detail, fmt.Sprintf("%s, bursts of %d, at most %s a burst", plural(starts, "fresh start"), e.opts.conns, plural(maxChecks, "bcrypt check")))
	checkRight(res, is2xx, "2xx", refused)
	if maxChecks > 1 {
		res.failf("a burst of one credential made %d bcrypt checks, not one", maxChecks)
	}
	return res
}

// plural writes n and the noun, with an s unless n is 1.
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
