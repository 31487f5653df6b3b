//go:build linux

package main

import (
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// openPTY opens a pseudo-terminal pair; the test is skipped where there is
// none (some containers have no /dev/pts).
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { master.Close() })
	fd := int(master.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		t.Skipf("cannot unlock the pseudo-terminal: %v", err)
	}
	n, err := unix.IoctlGetUint32(fd, unix.TIOCGPTN)
	if err != nil {
		t.Skipf("no pseudo-terminal number: %v", err)
	}
	slave, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("cannot open the pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { slave.Close() })
	return master, slave
}

// TestReadPasswordFromTerminal types into a pseudo-terminal and checks the
// prompts, the confirmation and the refusals.
func TestReadPasswordFromTerminal(t *testing.T) {
	tests := []struct {
		name    string
		typed   string
		confirm bool
		want    string // the password read; "" when an error is expected
		err     string
		prompts string
	}{
		{"confirmed", "s3cret\ns3cret\n", true, "s3cret", "", "Password: \nConfirm password: \n"},
		{"no confirmation asked", "s3cret\n", false, "s3cret", "", "Password: \n"},
		{"mismatch", "s3cret\nother\n", true, "", "the passwords do not match", "Password: \nConfirm password: \n"},
		{"empty", "\n", true, "", "the password is empty", "Password: \n"},
		{"too long", strings.Repeat("x", 73) + "\n", true, "", "longer than 72 bytes", "Password: \n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			master, slave := openPTY(t)
			if _, err := master.WriteString(tt.typed); err != nil {
				t.Fatal(err)
			}
			c, _, stderr := bufferedCLI(slave)
			got, err := c.readPassword(tt.confirm)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want %q", err, tt.err)
				}
			} else if err != nil || string(got) != tt.want {
				t.Fatalf("readPassword = %q, %v; want %q", got, err, tt.want)
			}
			if stderr.String() != tt.prompts {
				t.Errorf("prompts %q, want %q", stderr, tt.prompts)
			}
		})
	}
}
