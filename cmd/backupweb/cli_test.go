package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/testkit/logtest"
)

// testCLI returns a cli with in-memory streams and the given environment.
func testCLI(ctx context.Context, stdin string, env map[string]string) (*cli, *logtest.Buffer, *logtest.Buffer) {
	var out, errOut logtest.Buffer
	return &cli{
		ctx:       ctx,
		stdin:     io.NopCloser(strings.NewReader(stdin)),
		stdout:    &out,
		stderr:    &errOut,
		lookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok },
	}, &out, &errOut
}

// serveInProcess runs `backupweb serve -config DIR/backupweb.ini` in this
// process, with ini written there and env as its environment (nil: a test
// BACKUP_SECRET_KEY), until the test ends. It returns the address serve
// listens on and its log. Every test that starts the program goes through
// it.
func serveInProcess(t testing.TB, dir, ini string, env map[string]string) (addr string, log *logtest.Buffer) {
	t.Helper()
	path := filepath.Join(dir, "backupweb.ini")
	if err := os.WriteFile(path, []byte(ini), 0o600); err != nil {
		t.Fatal(err)
	}
	if env == nil {
		env = map[string]string{"BACKUP_SECRET_KEY": strings.Repeat("ab", 32)}
	}
	s := startServe(t, env, "-config", path)
	return s.addr, s.log
}

// served is a `backupweb serve` running in this process (startServe).
type served struct {
	t      testing.TB
	addr   string          // where it listens
	log    *logtest.Buffer // what it wrote to stderr
	cancel context.CancelFunc
	done   chan int
	once   sync.Once
	code   int
}

// startServe runs `backupweb serve args...` in this process, with env as
// its environment, and waits until it listens. It stops when the test
// ends, or sooner with stop.
func startServe(t testing.TB, env map[string]string, args ...string) *served {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	c, _, stderr := testCLI(ctx, "", env)
	s := &served{t: t, log: stderr, cancel: cancel, done: make(chan int, 1)}
	go func() { s.done <- c.main(append([]string{"serve"}, args...)) }()
	t.Cleanup(func() { s.stop() })
	s.addr = waitListening(t, stderr, s.done)
	return s
}

// stop shuts serve down, as a signal does, and returns its exit status;
// t fails when it does not stop within 15 s.
func (s *served) stop() int {
	s.once.Do(func() {
		s.cancel()
		select {
		case s.code = <-s.done:
		case <-time.After(15 * time.Second):
			s.code = -1
			s.t.Errorf("serve did not stop:\n%s", s.log)
		}
	})
	return s.code
}

func TestUsageAndVersion(t *testing.T) {
	tests := []struct {
		args     []string
		code     int
		out, err string
	}{
		{nil, exitUsage, "", "Usage: backupweb"},
		{[]string{"nonsense"}, exitUsage, "", `unknown command "nonsense"`},
		{[]string{"help"}, exitOK, "", "check-config"},
		{[]string{"version"}, exitOK, "backupweb ", ""},
		{[]string{"-version"}, exitOK, "backupweb ", ""},
		{[]string{"--version"}, exitOK, "backupweb ", ""},
		{[]string{"serve", "-log-level", "loud"}, exitUsage, "", "unknown log level"},
		{[]string{"version", "extra"}, exitUsage, "", "takes no arguments"},
		{[]string{"gen-secret", "-bogus"}, exitUsage, "", "flag provided but not defined"},
		{[]string{"serve", "-bogus"}, exitUsage, "", "flag provided but not defined"},
		{[]string{"serve", "-log-format", "xml"}, exitUsage, "", "unknown log format"},
		{[]string{"check-config", "extra"}, exitUsage, "", "unexpected arguments"},
	}
	for _, tt := range tests {
		c, out, errOut := testCLI(context.Background(), "", nil)
		if code := c.main(tt.args); code != tt.code {
			t.Errorf("%v: exit %d, want %d (stderr %q)", tt.args, code, tt.code, errOut.String())
		}
		if !strings.Contains(out.String(), tt.out) || !strings.Contains(errOut.String(), tt.err) {
			t.Errorf("%v: stdout %q stderr %q, want %q / %q", tt.args, out.String(), errOut.String(), tt.out, tt.err)
		}
	}
}

func TestGenSecret(t *testing.T) {
	seen := map[string]bool{}
	for range 3 {
		c, out, _ := testCLI(context.Background(), "", nil)
		if code := c.main([]string{"gen-secret"}); code != exitOK {
			t.Fatalf("exit %d", code)
		}
		s := strings.TrimSuffix(out.String(), "\n")
		if len(s) != 64 || strings.Trim(s, "0123456789abcdef") != "" {
			t.Fatalf("secret %q is not 64 lowercase hex characters", s)
		}
		if seen[s] {
			t.Fatal("gen-secret repeated itself")
		}
		seen[s] = true
	}
}

// TestVersionSpellingsAgree: version, -version and --version print the
// same line, with the Go version the program was built with.
func TestVersionSpellingsAgree(t *testing.T) {
	var lines []string
	for _, arg := range []string{"version", "-version", "--version"} {
		c, out, _ := testCLI(context.Background(), "", nil)
		c.main([]string{arg})
		lines = append(lines, out.String())
	}
	if lines[0] != lines[1] || lines[1] != lines[2] || !strings.Contains(lines[0], runtime.Version()) {
		t.Fatalf("version lines differ or lack the Go version: %q", lines)
	}
}

func TestLogLevels(t *testing.T) {
	for _, tt := range []struct {
		level      string
		info, warn bool
	}{{"debug", true, true}, {"info", true, true}, {"warn", false, true}, {"error", false, false}, {"WARN", false, true}} {
		var buf strings.Builder
		log, err := newLogger(&buf, "text", tt.level)
		if err != nil {
			t.Fatal(err)
		}
		log.Info("an info line")
		log.Warn("a warning")
		if strings.Contains(buf.String(), "an info line") != tt.info || strings.Contains(buf.String(), "a warning") != tt.warn {
			t.Errorf("-log-level %s wrote:\n%s", tt.level, buf.String())
		}
	}
}
