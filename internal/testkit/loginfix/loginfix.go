// Package loginfix holds the fixed data of the sign-in tests: the secret
// key, the test users and their passwords, the clock's start, and the
// user file's replacement as editors do it. The login package's own tests
// and the login test kit (which they cannot import) both use it.
package loginfix

import (
	"os"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/testkit"
	"github.com/backupweb/backupweb/internal/testkit/clocktest"
)

// Secret is a BACKUP_SECRET_KEY for tests only.
var Secret = []byte("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef")

// Passwords are the test users' passwords; hashes are made at bcrypt's
// minimum cost.
var Passwords = map[string]string{"alice": "alice-pw", "bob": "bob-pw"}

// NewClock returns a clock that only moves when told to, at 2025-03-01
// 12:00 UTC.
func NewClock() *clocktest.Clock {
	return clocktest.New(time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC))
}

// UsersText returns a user file for the named test users.
func UsersText(t testing.TB, names ...string) string {
	return testkit.Users(t, Passwords, names...)
}

// WriteFile replaces path's content by rename, as editors and the user
// command do, so the poller sees a new inode.
func WriteFile(t testing.TB, path, text string) {
	t.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}
