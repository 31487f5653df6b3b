package tokens

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestNewTokenShapeAndHash(t *testing.T) {
	var tok Token
	secret, err := New(&tok, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if !Wellformed(secret) || !strings.HasPrefix(secret, "bwt_") || len(secret) < 4+32 {
		t.Fatalf("token %q is not wellformed", secret)
	}
	if strings.Contains(tok.Hash, secret[4:]) || strings.Contains(secret, tok.ID) {
		t.Fatalf("the id or hash shows the secret: %+v", tok)
	}
	var other Token
	secret2, _ := New(&other, time.Now())
	if secret2 == secret || other.ID == tok.ID {
		t.Fatal("two tokens alike")
	}
	for _, bad := range []string{"", "bwt_", secret + "x", "bwx_" + secret[4:], secret[:len(secret)-1] + "!"} {
		if Wellformed(bad) {
			t.Errorf("Wellformed(%q) = true", bad)
		}
	}
}

func TestParseDuration(t *testing.T) {
	for in, want := range map[string]time.Duration{"90d": 90 * 24 * time.Hour, "2h": 2 * time.Hour} {
		if got, err := ParseDuration(in); err != nil || got != want {
			t.Errorf("ParseDuration(%q) = %v, %v", in, got, err)
		}
	}
	for _, bad := range []string{"", "0d", "-1h", "x", "1y"} {
		if _, err := ParseDuration(bad); err == nil {
			t.Errorf("ParseDuration(%q) accepted", bad)
		}
	}
}

// addToken makes a token for user in the file at path and returns it.
func addToken(t *testing.T, path string, tok *Token) string {
	t.Helper()
	secret, err := New(tok, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := Edit(path, func(d *Doc) error { d.Add(tok); return nil }); err != nil {
		t.Fatal(err)
	}
	return secret
}

func TestStoreLookupAndFailClosed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "users.tokens")
	alice := addToken(t, path, &Token{User: "alice", Label: "cron"})
	expired := addToken(t, path, &Token{User: "alice", Expires: time.Now().Add(-time.Minute)})
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v, %v", fi.Mode(), err)
	}
	data, _ := os.ReadFile(path)
	if strings.Contains(string(data), alice[4:]) {
		t.Fatal("the file holds the token")
	}
	s := Open(path, nil, nil)
	if tok, st := s.Lookup(alice); st != Valid || tok.User != "alice" || tok.Label != "cron" {
		t.Fatalf("Lookup = %+v, %v", tok, st)
	}
	if _, st := s.Lookup(expired); st != Expired {
		t.Fatalf("expired token: %v", st)
	}
	// The last character changed (to "A", or to "B" where it was "A").
	last := "A"
	if strings.HasSuffix(alice, last) {
		last = "B"
	}
	if _, st := s.Lookup(alice[:len(alice)-1] + last); st != Unknown {
		t.Fatalf("wrong token: %v", st)
	}
	// One broken line refuses every token, and the file is not edited.
	if err := os.WriteFile(path, append(data, "garbage\n"...), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := s.Reload(); err == nil || strings.Contains(err.Error(), "garbage") {
		t.Fatalf("Reload of a broken file: %v", err)
	}
	if _, st := s.Lookup(alice); st != Broken {
		t.Fatalf("broken file: %v", st)
	}
	if err := Edit(path, func(d *Doc) error { return nil }); err == nil {
		t.Fatal("a broken file was edited")
	}
}

func TestStoreSeesRevocationByPolling(t *testing.T) {
	path := filepath.Join(t.TempDir(), "users.tokens")
	tok := &Token{User: "bob"}
	secret := addToken(t, path, tok)
	s := Open(path, nil, nil)
	if _, st := s.Lookup(secret); st != Valid {
		t.Fatal("not valid")
	}
	if err := Edit(path, func(d *Doc) error { d.Revoke(tok.ID); return nil }); err != nil {
		t.Fatal(err)
	}
	s.Poll()
	if _, st := s.Lookup(secret); st != Unknown {
		t.Fatalf("revoked token still %v after a poll", st)
	}
}

func TestLastUsedWrittenCoarsely(t *testing.T) {
	path := filepath.Join(t.TempDir(), "users.tokens")
	tok := &Token{User: "carol"}
	secret := addToken(t, path, tok)
	var mu sync.Mutex
	now := time.Now()
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	s := Open(path, nil, clock)
	got, _ := s.Lookup(secret)
	if !s.Used(got, "192.0.2.1") || s.Used(got, "192.0.2.1") || !s.Used(got, "192.0.2.2") {
		t.Fatal("first use from an address not told apart")
	}
	before, _ := os.ReadFile(path)
	s.Poll() // the first flush is due at once
	after, _ := os.ReadFile(path)
	if string(before) == string(after) || !strings.Contains(string(after), "last_used") {
		t.Fatalf("last use not written: %s", after)
	}
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	advance(30 * time.Second)
	got, _ = s.Lookup(secret)
	s.Used(got, "192.0.2.1")
	s.Poll() // within the minute: nothing written
	if again, _ := os.ReadFile(path); string(again) != string(after) {
		t.Fatal("the file was written again within a minute")
	}
	advance(usageEvery / 2)
	s.Poll()
	if again, _ := os.ReadFile(path); string(again) == string(after) {
		t.Fatal("the due last use was not written")
	}
	if list := s.Of("carol"); len(list) != 1 || list[0].LastUsed.IsZero() {
		t.Fatalf("Of = %+v", list)
	}
}

// TestParseNamesTheLine: a line too long for the reader is an error naming
// the file and the line, as any other line that is not a token is.
func TestParseNamesTheLine(t *testing.T) {
	const good = `{"id":"a","user":"alice","hash":"` + "0000000000000000000000000000000000000000000000000000000000000000" + `","created":"2026-01-01T00:00:00Z"}`
	for _, tt := range []struct {
		name, text, want string
	}{
		{"too long", "# header\n" + good + "\n" + `{"label":"` + strings.Repeat("x", maxLine) + `"}` + "\n", "users.tokens:3: the line is longer than 65536 bytes"},
		{"not a token", good + "\n\nnope\n", "users.tokens:3: not a token"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("users.tokens", strings.NewReader(tt.text))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Parse: %v, want %q", err, tt.want)
			}
		})
	}
	if list, err := Parse("users.tokens", strings.NewReader(good+"\n")); err != nil || len(list) != 1 {
		t.Fatalf("a good line: %v %v", list, err)
	}
}

// TestLimits: the label and path limits name themselves.
func TestLimits(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want string
	}{
		{CheckLabel(strings.Repeat("a", MaxLabel)), ""},
		{CheckLabel(strings.Repeat("a", MaxLabel+1)), "at most 80"},
		{CheckLabel("a\nb"), "one line"},
		{CheckLabel("\xff"), "one line"},
		{CheckPath("/" + strings.Repeat("a", MaxPath-1)), ""},
		{CheckPath("/" + strings.Repeat("a", MaxPath)), "at most 200"},
		{CheckPath("backups/"), "start with /"},
		{CheckPath("/a\x00"), "one line"},
	} {
		if (tt.err == nil) != (tt.want == "") || tt.err != nil && !strings.Contains(tt.err.Error(), tt.want) {
			t.Errorf("got %v, want %q", tt.err, tt.want)
		}
	}
}
