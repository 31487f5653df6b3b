package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/backupweb/backupweb/internal/password"
)

// bufferedCLI returns a cli whose standard input is stdin and whose output
// streams are the returned buffers.
func bufferedCLI(stdin io.Reader) (c *cli, stdout, stderr *bytes.Buffer) {
	stdout, stderr = new(bytes.Buffer), new(bytes.Buffer)
	c = &cli{
		ctx:       context.Background(),
		stdin:     stdin,
		stdout:    stdout,
		stderr:    stderr,
		lookupEnv: func(string) (string, bool) { return "", false },
	}
	return c, stdout, stderr
}

func TestReadPasswordFromPipe(t *testing.T) {
	long := strings.Repeat("p", password.MaxLen)
	tests := []struct {
		name  string
		input string
		want  string // the password read; "" when an error is expected
		err   string // part of the expected error
	}{
		{"line", "s3cret\n", "s3cret", ""},
		{"CRLF", "s3cret\r\n", "s3cret", ""},
		{"no final newline", "s3cret", "s3cret", ""},
		{"first line only", "first\nsecond\n", "first", ""},
		{"inner spaces kept", " a b \n", " a b ", ""},
		{"lone CR kept", "abc\r", "abc\r", ""},
		{"72 bytes", long + "\n", long, ""},
		{"no input", "", "", "no password on standard input"},
		{"empty line", "\n", "", "the password is empty"},
		{"empty CRLF line", "\r\n", "", "the password is empty"},
		{"73 bytes", long + "x\n", "", "longer than 72 bytes"},
		{"huge line", strings.Repeat("x", 10000), "", "longer than 72 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _, stderr := bufferedCLI(strings.NewReader(tt.input))
			got, err := c.readPassword(true)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want one containing %q", err, tt.err)
				}
				if strings.Contains(tt.err, "longer") && !errors.Is(err, password.ErrTooLong) {
					t.Errorf("error %v does not wrap password.ErrTooLong", err)
				}
				return
			}
			if err != nil || string(got) != tt.want {
				t.Fatalf("readPassword = %q, %v; want %q", got, err, tt.want)
			}
			if stderr.Len() != 0 {
				t.Errorf("prompted on a pipe: %q", stderr)
			}
		})
	}
}

// TestReadPasswordFromFile checks that an *os.File that is not a terminal
// is read like a pipe, without prompts.
func TestReadPasswordFromFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "pw")
	if err := os.WriteFile(path, []byte("from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	c, _, stderr := bufferedCLI(f)
	got, err := c.readPassword(true)
	if err != nil || string(got) != "from-file" || stderr.Len() != 0 {
		t.Errorf("readPassword = %q, %v, stderr %q; want from-file and no prompt", got, err, stderr)
	}
}
