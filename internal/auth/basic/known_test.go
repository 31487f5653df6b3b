package basic

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/testkit/logtest"
)

// TestKnownAddressesFile: an address that signed in is known to a
// provider made afresh on the same state folder (a restart), for its own
// name only, across its IPv6 /64, until known_address_days pass; the file
// holds neither the address nor the name; a rotated password forgets it;
// a file that does not parse knows no address and says so.
func TestKnownAddressesFile(t *testing.T) {
	dir := t.TempDir()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	logs := &logtest.Buffer{}
	deps := auth.Deps{StateDir: dir, Now: clock, Logger: slog.New(slog.NewTextHandler(logs, nil))}
	cfg := Config{Username: "ops", Password: "a long password", KnownAddressDays: 10}
	p, err := New(cfg, deps)
	if err != nil {
		t.Fatal(err)
	}
	r := httptest.NewRequest("GET", "/api/me", nil)
	r.RemoteAddr = "[2001:db8:1:2::10]:4000"
	r.SetBasicAuth("ops", "a long password")
	if _, ok, err := p.Identify(r); !ok || err != nil {
		t.Fatalf("the sign-in: %v, %v", ok, err)
	}
	data, err := os.ReadFile(filepath.Join(dir, KnownFile))
	if err != nil {
		t.Fatal(err)
	}
	if s := string(data); strings.Contains(s, "2001:db8") || strings.Contains(s, "ops") || strings.Count(s, "\n") != 1 {
		t.Fatalf("the file names the address or the name, or holds not one record:\n%s", s)
	}
	known := func(p *Provider, user, addr string) bool {
		ok, err := p.marks.marked(context.Background(), knownID(p.cred.Load().known, user, addr))
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	restarted, err := New(cfg, deps)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, user, addr string
		ahead            time.Duration
		want             bool
	}{
		{"the same /64", "ops", "2001:db8:1:2::/64", 0, true},
		{"another /64", "ops", "2001:db8:1:3::/64", 0, false},
		{"another name", "root", "2001:db8:1:2::/64", 0, false},
		{"within the days", "ops", "2001:db8:1:2::/64", 9 * 24 * time.Hour, true},
		{"past the days", "ops", "2001:db8:1:2::/64", 11 * 24 * time.Hour, false},
	}
	for _, tt := range tests {
		now = now.Add(tt.ahead)
		if got := known(restarted, tt.user, tt.addr); got != tt.want {
			t.Errorf("%s: known %v, want %v", tt.name, got, tt.want)
		}
		now = now.Add(-tt.ahead)
	}
	rotated, err := New(Config{Username: "ops", Password: "the new password", KnownAddressDays: 10}, deps)
	if err != nil {
		t.Fatal(err)
	}
	if known(rotated, "ops", "2001:db8:1:2::/64") {
		t.Error("an address known for the old password is known for the new one")
	}
	if err := restarted.SetCredentials("ops", "the new password", false); err != nil {
		t.Fatal(err)
	}
	if known(restarted, "ops", "2001:db8:1:2::/64") {
		t.Error("a reload to a new password kept the addresses of the old one")
	}
	os.WriteFile(filepath.Join(dir, KnownFile), []byte("not a record\n"), 0o600)
	broken, err := New(cfg, deps)
	if err != nil {
		t.Fatal(err)
	}
	if known(broken, "ops", "2001:db8:1:2::/64") || !strings.Contains(logs.String(), "every address counts as new") {
		t.Errorf("a file that does not parse: known, or not logged:\n%s", logs)
	}
}

// FuzzParseMarks: a known-addresses file never panics the parser, and
// what it accepts it reads back the same once written as mark writes it.
func FuzzParseMarks(f *testing.F) {
	f.Add([]byte(strings.Repeat("ab", 32) + " 1767225600\n"))
	f.Add([]byte("not a record\n"))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, data []byte) {
		now := time.Unix(0, 0)
		m, err := parseMarks(data, now)
		if err != nil {
			return
		}
		var b strings.Builder
		for id, at := range m {
			b.WriteString(id + " " + strconv.FormatInt(at.Unix(), 10) + "\n")
		}
		again, err := parseMarks([]byte(b.String()), now)
		if err != nil || len(again) != len(m) {
			t.Fatalf("written records do not read back: %v, %d of %d", err, len(again), len(m))
		}
	})
}

// TestKnownAddressesUnwritable: a state folder that cannot be written
// keeps the known addresses in memory, and says so once.
func TestKnownAddressesUnwritable(t *testing.T) {
	logs := &logtest.Buffer{}
	deps := auth.Deps{StateDir: filepath.Join(t.TempDir(), "missing"), Logger: slog.New(slog.NewTextHandler(logs, nil))}
	p, err := New(Config{Username: "ops", Password: "a long password"}, deps)
	if err != nil {
		t.Fatal(err)
	}
	for _, addr := range []string{"192.0.2.1", "192.0.2.2"} {
		r := httptest.NewRequest("GET", "/api/me", nil)
		r.RemoteAddr = addr + ":4000"
		r.SetBasicAuth("ops", "a long password")
		if _, ok, err := p.Identify(r); !ok || err != nil {
			t.Fatalf("the sign-in from %s: %v, %v", addr, ok, err)
		}
		if ok, _ := p.marks.marked(context.Background(), knownID(p.cred.Load().known, "ops", addr)); !ok {
			t.Errorf("%s is not known in memory", addr)
		}
	}
	if n := strings.Count(logs.String(), "cannot be written"); n != 1 {
		t.Errorf("%d lines about the unwritable file, want 1:\n%s", n, logs)
	}
}
