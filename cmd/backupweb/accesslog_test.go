package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
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
	s := startServe(t, nil, "-listen", "127.0.0.1:0")
	addr, stderr := s.addr, s.log

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
	if code := s.stop(); code != exitOK {
		t.Fatalf("exit %d", code)
	}
	if n := strings.Count(stderr.String(), "msg=request method=GET path=/api/backups status=200"); n != clients*each {
		t.Fatalf("%d access lines after shutdown, want %d:\n%s", n, clients*each, stderr.String())
	}
}

// TestServePprof: profiles are served on the metrics listener only when
// [server] pprof = true, never on the main listener.
func TestServePprof(t *testing.T) {
	for _, on := range []bool{false, true} {
		t.Run(fmt.Sprint("pprof=", on), func(t *testing.T) {
			dir := t.TempDir()
			t.Chdir(dir)
			os.WriteFile("backupweb.ini", fmt.Appendf(nil, "[server]\nlisten = 127.0.0.1:0\nmetrics_listen = 127.0.0.1:0\npprof = %v\n", on), 0o600)
			s := startServe(t, nil)
			addr, stderr := s.addr, s.log
			m := regexp.MustCompile(`serving metrics" addr=(127\.0\.0\.1:\d+)`).FindStringSubmatch(stderr.String())
			if m == nil {
				t.Fatalf("no metrics listener:\n%s", stderr)
			}
			get := func(url string) (int, string) {
				resp, err := http.Get(url)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				b, _ := io.ReadAll(resp.Body)
				return resp.StatusCode, string(b)
			}
			code, body := get("http://" + m[1] + "/debug/pprof/heap?debug=1")
			if on && (code != 200 || !strings.Contains(body, "heap profile")) {
				t.Errorf("pprof on: heap profile %d:\n%.200s", code, body)
			}
			if !on && code != 404 {
				t.Errorf("pprof off: /debug/pprof/heap answered %d", code)
			}
			if code, _ := get("http://" + m[1] + "/debug/pprof/"); on != (code == 200) {
				t.Errorf("pprof %v: index answered %d", on, code)
			}
			if code, _ := get("http://" + addr + "/debug/pprof/heap"); code == 200 {
				t.Error("the main listener serves profiles")
			}
			s.stop()
		})
	}
}

func TestCheckConfigPprofNeedsMetrics(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	os.WriteFile("backupweb.ini", []byte("[server]\npprof = true\n"), 0o600)
	c, stdout, stderr := testCLI(context.Background(), "", nil)
	if code := c.main([]string{"check-config"}); code == exitOK {
		t.Fatalf("pprof without metrics_listen accepted:\n%s%s", stdout, stderr)
	}
	if out := stdout.String() + stderr.String(); !strings.Contains(out, "pprof") || !strings.Contains(out, "metrics_listen") {
		t.Errorf("the error does not name the keys:\n%s", out)
	}
}

// TestCheckConfigPublicPprof: check-config refuses pprof on a
// metrics_listen others can reach unless pprof_public says it is meant,
// and warns of public metrics alone, naming the address.
func TestCheckConfigPublicPprof(t *testing.T) {
	tests := []struct {
		name, server string
		ok           bool
		want         string
	}{
		{"pprof on every interface", "metrics_listen = 0.0.0.0:9464\npprof = true\n", false, "pprof_public"},
		{"pprof public on purpose", "metrics_listen = 0.0.0.0:9464\npprof = true\npprof_public = true\n", true, "0.0.0.0:9464"},
		{"public metrics alone", "metrics_listen = 0.0.0.0:9464\n", true, "0.0.0.0:9464 is not a loopback or private address"},
		{"pprof on loopback", "metrics_listen = 127.0.0.1:9464\npprof = true\n", true, "configuration ok"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Chdir(t.TempDir())
			os.Mkdir("backups", 0o700)
			os.WriteFile("backupweb.ini", []byte("[server]\nlisten = 127.0.0.1:0\n"+tt.server+"[backups]\ndir = backups\n"), 0o600)
			c, stdout, stderr := testCLI(context.Background(), "", nil)
			code := c.main([]string{"check-config"})
			out := stdout.String() + stderr.String()
			if (code == exitOK) != tt.ok || !strings.Contains(out, tt.want) {
				t.Errorf("exit %d, want ok %v, with %q:\n%s", code, tt.ok, tt.want, out)
			}
		})
	}
}
