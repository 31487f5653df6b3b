// Command loadtest measures how backupweb holds up under a flood of wrong
// credentials: while many clients from one address send wrong passwords, a
// second client from another address, holding good credentials, measures
// the latency of its own requests to /api/backups.
//
// It builds and starts the real program on loopback (127.0.0.1:0), floods
// it from 127.0.0.1, measures from 127.0.0.2 (Linux routes all of
// 127.0.0.0/8 to the loopback device), stops by itself after -duration and
// never sends more than -max-requests requests. Nothing leaves the machine.
//
//	go run ./cmd/loadtest -scenario basic
//	go run ./cmd/loadtest -scenario login
//
// It exits 1 when the measuring client's 99th percentile exceeds -goal.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

func main() {
	scenario := flag.String("scenario", "basic", "basic (wrong Basic passwords) or login (wrong logins on the login page)")
	duration := flag.Duration("duration", 10*time.Second, "how long the flood lasts")
	flooders := flag.Int("flooders", 0, "concurrent flooding clients (default 16 for basic, 64 for login)")
	maxRequests := flag.Int64("max-requests", 2_000_000, "upper bound on flood requests")
	goal := flag.Duration("goal", 100*time.Millisecond, "the measuring client's 99th percentile must stay under this")
	flag.Parse()

	if err := run(*scenario, *duration, *flooders, *maxRequests, *goal); err != nil {
		fmt.Fprintln(os.Stderr, "loadtest:", err)
		os.Exit(1)
	}
}

func run(scenario string, duration time.Duration, flooders int, maxRequests int64, goal time.Duration) error {
	var sc scenarioDef
	switch scenario {
	case "basic":
		sc = basicScenario()
	case "login":
		sc = loginScenario()
	default:
		return fmt.Errorf("unknown scenario %q (basic or login)", scenario)
	}
	if flooders <= 0 {
		flooders = sc.flooders
	}
	dir, err := os.MkdirTemp("", "backupweb-load-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)

	bin := filepath.Join(dir, "backupweb")
	build := exec.Command("go", "build", "-o", bin, "./cmd/backupweb")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("building backupweb: %w", err)
	}
	srv, err := startServer(bin, dir, sc)
	if err != nil {
		return err
	}
	defer srv.stop()
	fmt.Printf("scenario %s: server %s, %d flooding clients from 127.0.0.1 for %s\n", scenario, srv.base, flooders, duration)

	good, err := sc.login(newClient("127.0.0.2"), srv.base)
	if err != nil {
		return fmt.Errorf("measuring client cannot log in: %w", err)
	}
	// Warm the credential cache (basic) before measuring.
	if _, err := good(); err != nil {
		return err
	}

	ctx, cancel := context.WithTimeout(context.Background(), duration)
	defer cancel()
	var sent atomic.Int64
	statuses := newCounter()
	var wg sync.WaitGroup
	for i := range flooders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			flood := sc.flood(newClient("127.0.0.1"), srv.base, i)
			for ctx.Err() == nil && sent.Add(1) <= maxRequests {
				statuses.add(flood(ctx))
			}
		}()
	}

	var lat []time.Duration
	goodStatuses := newCounter()
	tick := time.NewTicker(20 * time.Millisecond)
	for ctx.Err() == nil {
		<-tick.C
		start := time.Now()
		code, err := good()
		lat = append(lat, time.Since(start))
		if err != nil {
			code = -1
		}
		goodStatuses.add(code)
	}
	tick.Stop()
	wg.Wait()

	slices.Sort(lat)
	p := func(q float64) time.Duration { return lat[min(len(lat)-1, int(q*float64(len(lat))))] }
	fmt.Printf("flood: %d requests, statuses %s\n", min(sent.Load(), maxRequests), statuses)
	fmt.Printf("measuring client: %d requests, statuses %s\n", len(lat), goodStatuses)
	fmt.Printf("latency p50 %s  p95 %s  p99 %s  max %s (goal p99 < %s)\n",
		p(0.50).Round(time.Microsecond), p(0.95).Round(time.Microsecond), p(0.99).Round(time.Microsecond),
		lat[len(lat)-1].Round(time.Microsecond), goal)
	if goodStatuses.m[200] != len(lat) {
		return fmt.Errorf("the measuring client got answers other than 200: %s", goodStatuses)
	}
	if p(0.99) >= goal {
		return fmt.Errorf("p99 %s is over the goal %s", p(0.99), goal)
	}
	fmt.Println("PASS")
	return nil
}

// counter counts response statuses.
type counter struct {
	mu sync.Mutex
	m  map[int]int
}

func newCounter() *counter { return &counter{m: map[int]int{}} }

func (c *counter) add(code int) {
	c.mu.Lock()
	c.m[code]++
	c.mu.Unlock()
}

func (c *counter) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	keys := make([]int, 0, len(c.m))
	for k := range c.m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	s := ""
	for _, k := range keys {
		s += fmt.Sprintf("%d:%d ", k, c.m[k])
	}
	return s
}
