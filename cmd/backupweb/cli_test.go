package main

import (
	"context"
	"github.com/backupweb/backupweb/internal/logtest"
	"io"
	"strings"
	"testing"
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
