package main

import (
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// request sends one request with client c (worker i's) and returns the
// answer's status, or an error when no answer came.
type request func(i int, c *http.Client) (int, error)

// steady runs one worker per client, each sending requests back to back on
// its own keep-alive connection, until the duration has passed or
// maxRequests have been sent in all, and records every answer. A request
// in flight at the deadline is let finish (the client's timeout bounds
// it), so that the end of the run is never counted as a failure. It
// returns how long the load lasted.
func steady(clients []*http.Client, duration time.Duration, maxRequests int64, rec *recorder, send request) time.Duration {
	var sent atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	deadline := start.Add(duration)
	for i, c := range clients {
		wg.Go(func() {
			for running(deadline) && sent.Add(1) <= maxRequests {
				t := time.Now()
				code, err := send(i, c)
				rec.add(code, time.Since(t), err)
			}
		})
	}
	wg.Wait()
	return time.Since(start)
}

// burst sends one request per client at the same instant (the goroutines
// wait at a barrier that opens once they are all started) and records the
// answers. It returns how long the burst took.
func burst(clients []*http.Client, rec *recorder, send request) time.Duration {
	var wg, started sync.WaitGroup
	gate := make(chan struct{})
	started.Add(len(clients))
	for i, c := range clients {
		wg.Go(func() {
			started.Done()
			<-gate
			t := time.Now()
			code, err := send(i, c)
			rec.add(code, time.Since(t), err)
		})
	}
	started.Wait()
	start := time.Now()
	close(gate)
	wg.Wait()
	return time.Since(start)
}

// clientsFrom returns n one-connection clients leaving from localIP.
func clientsFrom(localIP string, n int) []*http.Client {
	clients := make([]*http.Client, n)
	for i := range clients {
		clients[i] = newClient(localIP)
	}
	return clients
}

// warm opens each client's connection with an unprotected request
// (/healthz), so that a burst that follows starts on open connections.
func warm(clients []*http.Client, base string) error {
	for _, c := range clients {
		code, err := get(c, base+"/healthz", nil)
		if err != nil {
			return err
		}
		if code != http.StatusOK {
			return &statusErr{what: "GET /healthz", code: code}
		}
	}
	return nil
}

// statusErr is an unexpected answer during a scenario's preparation.
type statusErr struct {
	what string
	code int
}

func (e *statusErr) Error() string { return fmt.Sprintf("%s answered %d", e.what, e.code) }

// get sends a GET of url, adjusted by mod when it is not nil, and returns
// the status, having read the body.
func get(c *http.Client, url string, mod func(*http.Request)) (int, error) {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	if mod != nil {
		mod(req)
	}
	return do(c, req)
}

// do sends req and reads the whole answer, so that the connection is
// reused.
func do(c *http.Client, req *http.Request) (int, error) {
	resp, err := c.Do(req)
	if err != nil {
		return statusError, err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err != nil {
		return statusError, err
	}
	return resp.StatusCode, nil
}
