package main

import (
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/backupweb/backupweb/internal/password"
)

func TestHashPassword(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		input    string
		code     int
		password string // checked against the printed hash when code is 0
		stderr   string // part of standard error when code is not 0
	}{
		{"piped line", []string{"-cost", "4"}, "s3cret\n", exitOK, "s3cret", ""},
		{"CRLF", []string{"-cost", "4"}, "s3cret\r\n", exitOK, "s3cret", ""},
		{"no final newline", []string{"-cost=5"}, "s3cret", exitOK, "s3cret", ""},
		{"72 bytes", []string{"-cost", "4"}, strings.Repeat("x", 72), exitOK, strings.Repeat("x", 72), ""},
		{"no input", []string{"-cost", "4"}, "", exitError, "", "backupweb hash-password: no password on standard input"},
		{"empty password", []string{"-cost", "4"}, "\n", exitError, "", "backupweb hash-password: the password is empty"},
		{"73 bytes", []string{"-cost", "4"}, strings.Repeat("x", 73) + "\n", exitError, "", "backupweb hash-password: the password is longer than 72 bytes"},
		{"cost too low", []string{"-cost", "3"}, "s3cret\n", exitUsage, "", "backupweb hash-password: -cost must be between 4 and 31"},
		{"cost too high", []string{"-cost", "32"}, "s3cret\n", exitUsage, "", "-cost must be between 4 and 31"},
		{"cost not a number", []string{"-cost", "high"}, "s3cret\n", exitUsage, "", "invalid value"},
		{"extra argument", []string{"s3cret"}, "", exitUsage, "", "backupweb hash-password: takes no arguments"},
		{"unknown flag", []string{"-rounds", "4"}, "", exitUsage, "", "flag provided but not defined"},
		{"help", []string{"-h"}, "", exitOK, "", "-cost"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, stdout, stderr := bufferedCLI(strings.NewReader(tt.input))
			code := runHashPassword(c, tt.args)
			if code != tt.code {
				t.Fatalf("exit %d, want %d; stderr %q", code, tt.code, stderr)
			}
			if tt.password == "" {
				if !strings.Contains(stderr.String(), tt.stderr) || stdout.Len() != 0 {
					t.Errorf("stdout %q stderr %q; want nothing and %q", stdout, stderr, tt.stderr)
				}
				return
			}
			hash, ok := strings.CutSuffix(stdout.String(), "\n")
			if !ok || strings.Contains(hash, "\n") {
				t.Fatalf("stdout %q is not one line", stdout)
			}
			if err := bcrypt.CompareHashAndPassword([]byte(hash), []byte(tt.password)); err != nil {
				t.Errorf("printed hash does not verify: %v", err)
			}
			if stderr.Len() != 0 {
				t.Errorf("stderr %q, want nothing", stderr)
			}
		})
	}
}

// TestHashPasswordDefaultCost runs hash-password as operators do, at the
// default cost of 12.
func TestHashPasswordDefaultCost(t *testing.T) {
	c, stdout, stderr := bufferedCLI(strings.NewReader("correct horse\n"))
	if code := runHashPassword(c, nil); code != exitOK {
		t.Fatalf("exit %d; stderr %q", code, stderr)
	}
	hash := strings.TrimSuffix(stdout.String(), "\n")
	cost, err := password.ParseHash(hash)
	if err != nil || cost != 12 {
		t.Fatalf("printed hash has cost %d (%v), want 12", cost, err)
	}
	if err := bcrypt.CompareHashAndPassword([]byte(hash), []byte("correct horse")); err != nil {
		t.Errorf("printed hash does not verify: %v", err)
	}
}
