package main

import (
	"context"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestServeAccessLogSurvivesShutdown: every request answered before a
// graceful shutdown has its access line on standard error when serve
// returns, although lines are written in batches.
func TestServeAccessLogSurvivesShutdown(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	os.Mkdir("backups", 0o700)
	// A flush interval that never comes: only the shutdown's flush can
	// write the lines (the buffer holds them all).
	defer func(old time.Duration) { accessFlushInterval = old }(accessFlushInterval)
	accessFlushInterval = time.Hour
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c, _, stderr := testCLI(ctx, "", nil)
	done := make(chan int, 1)
	go func() { done <- c.main([]string{"serve", "-listen", "127.0.0.1:0"}) }()
	addr := waitListening(t, stderr, done)

	const clients, each = 8, 25
	var wg sync.WaitGroup
	for range clients {
		wg.Go(func() {
			for range each {
				resp, err := http.Get("http://" + addr + "/api/backups")
				if err != nil {
					t.Error(err)
					return
				}
				resp.Body.Close()
			}
		})
	}
	wg.Wait()
	if n := strings.Count(stderr.String(), "msg=request"); n == clients*each {
		t.Logf("all %d lines were out before the shutdown", n)
	}
	cancel()
	select {
	case code := <-done:
		if code != exitOK {
			t.Fatalf("exit %d", code)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("serve did not shut down")
	}
	if n := strings.Count(stderr.String(), "msg=request method=GET path=/api/backups status=200"); n != clients*each {
		t.Fatalf("%d access lines after shutdown, want %d:\n%s", n, clients*each, stderr.String())
	}
}
