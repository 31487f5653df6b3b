package main

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// flooder sends one flooding client's next request and returns the
// status.
type flooder func() (code int, err error)

// floodDef is one flood scenario.
type floodDef struct {
	name     string
	flooders int
	spec     serverSpec
	// measure prepares the measuring client (at 127.0.0.2) and returns
	// its request, which must answer 200.
	measure func(s *server) (func() (int, error), error)
	// flood prepares flooding client i (at 127.0.0.1); aliceWrong counts
	// the wrong verdicts given for alice's name.
	flood func(s *server, i int, aliceWrong *atomic.Int64) (flooder, error)
	// perName is whether the wrong verdicts for one name are bounded by
	// max_user_failures as well.
	perName bool
}

// runFloodBasic: 16 clients send wrong Basic passwords for alice.
func runFloodBasic(e *env) []*result {
	return []*result{e.flood(floodDef{
		name: "flood-basic", flooders: 16, spec: basicSpec("", ""),
		measure: func(s *server) (func() (int, error), error) {
			c := newClient("127.0.0.2")
			return func() (int, error) { return get(c, s.base+"/api/backups", withBasic) }, nil
		},
		flood: func(s *server, i int, _ *atomic.Int64) (flooder, error) {
			c := newClient("127.0.0.1")
			wrong := func(r *http.Request) { r.SetBasicAuth(goodUser, fmt.Sprintf("wrong-%d", i)) }
			return func() (int, error) { return get(c, s.base+"/api/backups", wrong) }, nil
		},
	})}
}

// runFloodLogin: 64 clients post wrong logins, half for alice and half for
// names nobody has, while alice, signed in from 127.0.0.2, reads the
// catalog.
func runFloodLogin(e *env) []*result {
	return []*result{e.flood(floodDef{
		name: "flood-login", flooders: 64, spec: sessionSpec("", ""), perName: true,
		measure: func(s *server) (func() (int, error), error) {
			c := newClient("127.0.0.2")
			if _, err := signIn(c, s.base); err != nil {
				return nil, fmt.Errorf("the measuring client cannot sign in: %w", err)
			}
			return func() (int, error) { return get(c, s.base+"/api/backups", nil) }, nil
		},
		flood: func(s *server, i int, aliceWrong *atomic.Int64) (flooder, error) {
			c := newClient("127.0.0.1")
			c.Jar = newJar()
			token, err := formToken(c, s.base)
			if err != nil {
				return nil, err
			}
			user := goodUser
			if i%2 == 1 {
				user = fmt.Sprintf("nobody-%d", i)
			}
			return func() (int, error) {
				code, err := postLogin(context.Background(), c, s.base, token, user, "wrong password")
				if code == http.StatusUnauthorized && user == goodUser {
					aliceWrong.Add(1)
				}
				return code, err
			}, nil
		},
	})}
}

// flood runs d: the flooders send wrong credentials back to back from
// 127.0.0.1 while the measuring client sends a right one every 20 ms from
// 127.0.0.2, for the duration or until -max-requests flood requests.
func (e *env) flood(d floodDef) *result {
	n := e.opts.flooders
	if n == 0 {
		n = d.flooders
	}
	s, err := startServer(e.bin, e.dir, d.spec)
	if err != nil {
		return failed(d.name, err)
	}
	defer s.stop()
	good, err := d.measure(s)
	if err != nil {
		return failed(d.name, err)
	}
	// Warm the credential cache (basic) before measuring.
	if code, err := good(); err != nil || code != http.StatusOK {
		return failed(d.name, fmt.Errorf("the measuring client's first request: status %d, %v", code, err))
	}
	var aliceWrong atomic.Int64
	floods := make([]flooder, n)
	for i := range floods {
		if floods[i], err = d.flood(s, i, &aliceWrong); err != nil {
			return failed(d.name, fmt.Errorf("preparing flooding client %d: %w", i, err))
		}
	}

	rec, measured := newRecorder(), newRecorder()
	var sent atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	deadline := start.Add(e.opts.duration)
	for _, f := range floods {
		wg.Go(func() {
			for running(deadline) && sent.Add(1) <= e.opts.maxRequests {
				t := time.Now()
				code, err := f()
				rec.add(code, time.Since(t), err)
			}
		})
	}
	tick := time.NewTicker(20 * time.Millisecond)
	for running(deadline) && sent.Load() < e.opts.maxRequests {
		<-tick.C
		t := time.Now()
		code, err := good()
		measured.add(code, time.Since(t), err)
	}
	tick.Stop()
	wg.Wait()
	elapsed := time.Since(start)
	s.stop()

	res := rec.result(d.name, elapsed)
	window, _ := time.ParseDuration(failureWindow)
	checkFlood(res, countVerdicts(res.statuses), maxFailures, fmt.Sprintf("max_failures = %d per address", maxFailures), window)
	if d.perName {
		bound := maxUserFailures * windows(elapsed, window)
		res.detail = append(res.detail, fmt.Sprintf("wrong verdicts for alice %d (at most %d: max_user_failures = %d)", aliceWrong.Load(), bound, maxUserFailures))
		if int(aliceWrong.Load()) > bound {
			res.failf("%d wrong verdicts for alice, more than %d (max_user_failures)", aliceWrong.Load(), bound)
		}
	}
	checkMeasured(res, measured.result("measuring", elapsed), e.opts.goal)
	return res
}

// checkMeasured adds the measuring client's figures to a flood's result:
// all its answers must be 200 and, when goal is set, its 99th percentile
// under goal.
func checkMeasured(res, m *result, goal time.Duration) {
	p99 := percentile(m.lat, 0.99)
	res.detail = append(res.detail, fmt.Sprintf("measuring client at 127.0.0.2: %d requests, statuses %s, p50 %s p99 %s",
		m.requests, formatStatuses(m.statuses), roundLatency(percentile(m.lat, 0.50)), roundLatency(p99)))
	if m.requests == 0 {
		res.failf("the measuring client sent nothing")
	}
	if m.statuses[http.StatusOK] != m.requests {
		res.failf("the measuring client, with right credentials, got answers other than 200")
	}
	if goal > 0 && p99 >= goal {
		res.failf("the measuring client's p99 %s is over the goal %s", roundLatency(p99), goal)
	}
}
