package login

import (
	"context"
	"path/filepath"
	"time"

	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/once"
)

// SpentFile is the file in [server] state_dir (store = file) that keeps
// the spent TOTP steps and second-factor pending states, so that a
// restart does not make them usable again.
const SpentFile = "single-use-tokens"

// MaxSpent is how many spent TOTP steps and pending states one process
// remembers (store = file). Only a completed second factor spends them,
// so only signed-in users fill it; when full, second factors are refused
// (503 with Retry-After) until the oldest expire, never forgotten early.
const MaxSpent = once.DefaultMax

// openSpent returns how the provider spends its single-use tokens: the
// shared store's SpendOnce, or a table of this process of max tokens
// (MaxSpent when zero) kept in SpentFile.
// A file that cannot be read as one is an error: the provider does not
// start rather than accept a token twice.
func openSpent(deps auth.Deps, max int) (func(ctx context.Context, kind, token string, ttl time.Duration) (bool, error), error) {
	if deps.Shared != nil {
		return deps.Shared.SpendOnce, nil
	}
	t, err := once.New(once.Options{Max: max, File: filepath.Join(deps.StateDir, SpentFile), Now: deps.Clock()})
	if err != nil {
		return nil, err
	}
	return func(_ context.Context, kind, token string, ttl time.Duration) (bool, error) {
		return t.Spend(kind, token, ttl)
	}, nil
}
