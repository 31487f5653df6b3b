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

// spentChecker is the optional ability of a shared store to say whether
// a token is spent without spending it (redisstore's Spent).
type spentChecker interface {
	Spent(ctx context.Context, kind, token string) (bool, error)
}

// openSpent returns how the provider spends its single-use tokens: the
// shared store's SpendOnce, or a table of this process of max tokens
// (MaxSpent when zero) kept in SpentFile; and how it asks whether one is
// spent, for pages that should not offer a form that can only fail
// (false when the shared store cannot tell: spend still decides).
// A file that cannot be read as one is an error: the provider does not
// start rather than accept a token twice.
func openSpent(deps auth.Deps, max int) (spend func(ctx context.Context, kind, token string, ttl time.Duration) (bool, error), spent func(ctx context.Context, kind, token string) (bool, error), err error) {
	if deps.Shared != nil {
		spent = func(context.Context, string, string) (bool, error) { return false, nil }
		if c, ok := deps.Shared.(spentChecker); ok {
			spent = c.Spent
		}
		return deps.Shared.SpendOnce, spent, nil
	}
	t, err := once.New(once.Options{Max: max, File: filepath.Join(deps.StateDir, SpentFile), Now: deps.Clock()})
	if err != nil {
		return nil, nil, err
	}
	spend = func(_ context.Context, kind, token string, ttl time.Duration) (bool, error) {
		return t.Spend(kind, token, ttl)
	}
	spent = func(_ context.Context, kind, token string) (bool, error) {
		return t.Spent(kind, token), nil
	}
	return spend, spent, nil
}
