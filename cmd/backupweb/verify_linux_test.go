//go:build linux

package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

// TestVerifyProgressOnTerminal: with standard error on a terminal, the
// command shows its progress there, on one line it rewrites and clears
// before the summary; the results still go to standard output.
func TestVerifyProgressOnTerminal(t *testing.T) {
	ini := verifyBackups(t, t.TempDir(), "")
	master, slave := openPTY(t)
	c, out, _ := testCLI(context.Background(), "", nil)
	c.stderr = slave
	if code := c.main([]string{"verify", "-config", ini}); code != exitError {
		t.Fatalf("exit %d, want 1\n%s", code, out)
	}
	slave.Close()
	var screen bytes.Buffer
	buf := make([]byte, 4096)
	master.SetReadDeadline(time.Now().Add(2 * time.Second))
	for {
		n, err := master.Read(buf)
		screen.Write(buf[:n])
		if err != nil {
			break
		}
	}
	s := screen.String()
	if !strings.Contains(s, "verifying: 4 of 4 backups, 20 B of 20 B") {
		t.Errorf("the terminal shows no progress: %q", s)
	}
	if !strings.HasSuffix(s, "\r\x1b[K") {
		t.Errorf("the progress line is not cleared at the end: %q", s)
	}
	if !strings.Contains(out.String(), "verified 4 backups") {
		t.Errorf("no summary on standard output:\n%s", out)
	}
}
