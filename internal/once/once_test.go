package once

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/testkit/clocktest"
)

func newClock() *clocktest.Clock {
	return clocktest.New(time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC))
}

// spend calls Spend and fails the test on an error.
func spend(t *testing.T, tb *Table, kind, token string, ttl time.Duration) bool {
	t.Helper()
	fresh, err := tb.Spend(kind, token, ttl)
	if err != nil {
		t.Fatalf("Spend(%q, %q): %v", kind, token, err)
	}
	return fresh
}

// TestSpendOnce: a token is fresh once until its ttl ends, kinds are apart,
// and an expired token is fresh again; Spent says so beforehand without
// spending.
func TestSpendOnce(t *testing.T) {
	clock := newClock()
	tb, err := New(Options{Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name        string
		kind, token string
		advance     time.Duration
		want        bool
	}{
		{"first use", "totp", "a", 0, true},
		{"second use", "totp", "a", 0, false},
		{"another kind", "pending", "a", 0, true},
		{"just before expiry", "totp", "a", time.Minute - time.Nanosecond, false},
		{"at expiry", "totp", "a", time.Nanosecond, true},
		{"again after that", "totp", "a", 0, false},
	} {
		clock.Advance(tt.advance)
		if spent := tb.Spent(tt.kind, tt.token); spent == tt.want {
			t.Errorf("%s: Spent = %v before the spend, want %v", tt.name, spent, !tt.want)
		}
		if got := spend(t, tb, tt.kind, tt.token, time.Minute); got != tt.want {
			t.Errorf("%s: fresh = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestFullTableRefuses is the flush: a table full of spent tokens refuses
// a new one with a *FullError (Unavailable, with the time until the first
// expiry) and still refuses every spent one; once the first expire, there
// is room again.
func TestFullTableRefuses(t *testing.T) {
	clock := newClock()
	tb, err := New(Options{Max: 100, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	spend(t, tb, "pending", "spent", 5*time.Minute)
	for i := range 99 {
		if !spend(t, tb, "ceremony", strconv.Itoa(i), 10*time.Minute) {
			t.Fatalf("token %d not fresh", i)
		}
	}
	for i := range 1000 {
		_, err := tb.Spend("ceremony", "new"+strconv.Itoa(i), 10*time.Minute)
		var full *FullError
		if !errors.As(err, &full) || !full.Unavailable() || !full.TableFull() || full.RetryIn() != 5*time.Minute {
			t.Fatalf("new token %d in a full table: %v", i, err)
		}
	}
	if spend(t, tb, "pending", "spent", 5*time.Minute) {
		t.Fatal("a spent token was fresh again after the flood")
	}
	if tb.Len() != 100 {
		t.Fatalf("Len %d, want 100", tb.Len())
	}
	clock.Advance(5 * time.Minute)
	if !spend(t, tb, "ceremony", "after", time.Minute) {
		t.Fatal("no room after the first token expired")
	}
	// The shorter ttl counts: once it has passed, its room is found.
	clock.Advance(time.Minute)
	if !spend(t, tb, "ceremony", "after the short one", time.Minute) {
		t.Fatal("no room after a token with a shorter ttl expired")
	}
}

// TestFileSurvivesRestart: with a file, what was spent stays spent in a
// new table over the same file, expired tokens are dropped, and the file
// is private.
func TestFileSurvivesRestart(t *testing.T) {
	clock := newClock()
	path := filepath.Join(t.TempDir(), "tokens")
	tb, err := New(Options{File: path, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	spend(t, tb, "totp", "alice\x0042", 90*time.Second)
	spend(t, tb, "pending", "nonce", 5*time.Minute)
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("file: %v, %v", fi, err)
	}
	clock.Advance(time.Minute)
	again, err := New(Options{File: path, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	if spend(t, again, "totp", "alice\x0042", 90*time.Second) || spend(t, again, "pending", "nonce", 5*time.Minute) {
		t.Fatal("a token spent before the restart was fresh after it")
	}
	clock.Advance(time.Minute)
	later, err := New(Options{File: path, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	if later.Len() != 1 {
		t.Fatalf("Len after the TOTP step expired: %d, want 1", later.Len())
	}
	if !spend(t, later, "totp", "alice\x0042", 90*time.Second) {
		t.Fatal("an expired token was not fresh")
	}
}

// TestBrokenFileRefused: a file that is not what the table writes is an
// error at New naming the file (and line), never an empty table.
func TestBrokenFileRefused(t *testing.T) {
	digest := strings.Repeat("ab", 32)
	for _, tt := range []struct{ name, text, want string }{
		{"empty", "", "cut short"},
		{"other header", "tokens 2\n", ":1: the first line"},
		{"bad digest", fileHeader + "\nzz 1\n", ":2: not a digest"},
		{"bad expiry", fileHeader + "\n" + digest + " soon\n", ":2: not a digest"},
		{"cut short", fileHeader + "\n" + digest + " 1", "cut short"},
		{"line too long", fileHeader + "\n" + digest + " 9000000000000000000\n" + strings.Repeat("x", 70_000) + "\n", ":3: the line is longer"},
		{"too many", fileHeader + "\n" + digest + " 9000000000000000000\n" + strings.Repeat("cd", 32) + " 9000000000000000000\n", "more than the 1"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "tokens")
			if err := os.WriteFile(path, []byte(tt.text), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := New(Options{File: path, Max: 1})
			if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("New: %v; want an error naming %s and %q", err, path, tt.want)
			}
		})
	}
	t.Run("unreadable", func(t *testing.T) {
		dir := t.TempDir()
		if _, err := New(Options{File: dir}); err == nil || !strings.Contains(err.Error(), dir) {
			t.Fatalf("New over a folder: %v", err)
		}
	})
}
