//go:build linux

package main

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

// TestUserTOTPDrawsQROnTerminal: with standard error a terminal, `user
// totp` draws the QR code there in half blocks; the URI stays the only
// line on standard output.
func TestUserTOTPDrawsQROnTerminal(t *testing.T) {
	users := userFile(t, "alice:"+testHashA+"\n")
	master, slave := openPTY(t)
	got := make(chan string)
	go func() {
		var b bytes.Buffer
		buf := make([]byte, 4096)
		for {
			n, err := master.Read(buf)
			b.Write(buf[:n])
			if err != nil || strings.Contains(b.String(), "enter the code it shows") {
				break
			}
		}
		got <- b.String()
		io.Copy(io.Discard, master)
	}()
	c, out, _ := bufferedCLI(strings.NewReader("000000\n"))
	c.stderr = slave
	c.lookupEnv = func(k string) (string, bool) { return testFactorSecret, k == "BACKUP_SECRET_KEY" }
	if code := runUser(c, []string{"totp", "-file", users, "alice"}); code != exitError {
		t.Fatalf("exit %d with a wrong code, want 1", code)
	}
	screen := <-got
	lines := 0
	for _, l := range strings.Split(screen, "\n") {
		if strings.ContainsAny(l, "█▀▄") {
			lines++
		}
	}
	if lines < 14 {
		t.Errorf("%d lines of half blocks on the terminal, want a QR code:\n%s", lines, screen)
	}
	if n := strings.Count(strings.TrimSpace(out.String()), "\n"); n != 0 || !strings.HasPrefix(out.String(), "otpauth://totp/") {
		t.Errorf("stdout %q, want the URI alone", out)
	}
}
