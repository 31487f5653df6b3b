package login_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/backupweb/backupweb/internal/auth/login"
	"github.com/backupweb/backupweb/internal/testkit"
	"github.com/backupweb/backupweb/internal/testkit/logintest"
)

// TestThirdPartyUserFiles logs in end to end with user files written by
// Apache's htpasswd ($2y$) and Python's bcrypt ($2b$), at cost 12, as kept
// in package userfile's test data (see its README for how they were made).
func TestThirdPartyUserFiles(t *testing.T) {
	tests := []struct {
		file, user, pw string
	}{
		{"htpasswd-users.txt", "bob", "bob htpasswd pw"},
		{"python-users.txt", "carol", "carol-python-pw"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("..", "..", "..", "internal", "userfile", "testdata", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			h := logintest.New(t, nil)
			logintest.WriteFile(t, h.UsersPath, string(data))
			if err := h.P.Reload(); err != nil {
				t.Fatal(err)
			}
			b := h.Browser()
			if r := b.Login(tt.user, tt.pw, "/"); r.Status != http.StatusSeeOther {
				t.Fatalf("login: %d", r.Status)
			}
			if r := b.Get("/api/me", false); r.Status != http.StatusOK || !strings.Contains(r.Body, tt.user) {
				t.Errorf("/api/me: %d %s", r.Status, r.Body)
			}
		})
	}
}

// TestRefusedLoginsLogged checks the contract's log line for each kind of
// refused login, and that no password ever reaches the log.
func TestRefusedLoginsLogged(t *testing.T) {
	h := logintest.New(t, func(c *login.Config) { c.MaxUserFailures = 2 })
	const secret = "Sup3r-Secret-Guess"
	b := h.Browser()
	b.Login("alice", secret, "/")
	b.Login("mallory\nlevel=INFO msg=forged", secret, "/")
	b.Login("alice", secret, "/")
	b.Login("alice", secret, "/") // throttled
	b.Post("/login", map[string][]string{"username": {"bob"}, "password": {secret}})
	b.MustLogin("bob")
	logs := h.Logs.String()
	if strings.Contains(logs, secret) || strings.Contains(logs, logintest.Passwords["bob"]) {
		t.Fatalf("a password reached the log:\n%s", logs)
	}
	for _, h := range []string{testkit.Hash(t, logintest.Passwords["alice"]), string(logintest.Secret)} {
		if strings.Contains(logs, h) {
			t.Fatalf("a hash or key reached the log")
		}
	}
	var refused []string
	for line := range strings.SplitSeq(strings.TrimSpace(logs), "\n") {
		if strings.Contains(line, "refused") {
			refused = append(refused, line)
		}
		if strings.HasPrefix(line, "level=INFO msg=forged") {
			t.Errorf("a user name forged a log line: %q", line)
		}
	}
	wants := []struct{ user, reason string }{
		{"user=alice", "bad credentials"},
		{`user="mallory\nlevel=INFO msg=forged"`, "bad credentials"},
		{"user=alice", "bad credentials"},
		{"user=alice", "too many failures"},
		{"user=bob", "missing or wrong csrf token"},
	}
	if len(refused) != len(wants) {
		t.Fatalf("%d refused lines, want %d:\n%s", len(refused), len(wants), logs)
	}
	for i, w := range wants {
		line := refused[i]
		for _, part := range []string{"level=WARN", "auth", "auth_type=" + login.Name, "client=127.0.0.1", w.user, `reason="` + w.reason + `"`} {
			if !strings.Contains(line, part) {
				t.Errorf("line %d %q lacks %q", i, line, part)
			}
		}
	}
}
