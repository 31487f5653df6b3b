package sessionauth

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/auth"
)

// spendOnly is shared state that keeps no sessions.
type spendOnly struct{}

func (spendOnly) SpendOnce(context.Context, string, string, time.Duration) (bool, error) {
	return true, nil
}
func (spendOnly) Ping(context.Context) error { return nil }

// TestOpenSessionsSharedWithoutStore: shared state that keeps no sessions
// is an error, never a silent fallback to sessions this instance keeps
// alone.
func TestOpenSessionsSharedWithoutStore(t *testing.T) {
	s, err := OpenSessions(auth.Deps{Shared: spendOnly{}, SecretKey: []byte(strings.Repeat("k", 32)), StateDir: t.TempDir()}, "flask-login", Settings{})
	if err == nil {
		s.Close()
		t.Fatal("OpenSessions with shared state that keeps no sessions gave no error")
	}
	if !strings.Contains(err.Error(), "keeps no sessions") {
		t.Errorf("error %q does not say what is missing", err)
	}
}
