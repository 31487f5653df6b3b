package passwordauth

import (
	"errors"

	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/throttle"
)

// SharedCounters is the ability of the program's shared state
// (auth.Deps.Shared; redisstore.Client) to count failures for every
// instance at once.
type SharedCounters interface {
	// Counter returns the failure counter named name, configured by o.
	// Names tell counters apart in the store ("basic.addr",
	// "flask-login.user"); o.Now and o.OnFull are not used, since the
	// count lives in the store.
	Counter(name string, o throttle.Options) throttle.Counter
}

// NewCounter makes one failure counter, named and configured as
// SharedCounters.Counter says.
type NewCounter func(name string, o throttle.Options) throttle.Counter

// Counters returns how a password type makes its failure counters: through
// deps.Shared when the program has shared state, else counted in this
// process by a throttle.Limiter. A shared state that cannot count failures
// is an error, never a silent fallback to counts each instance keeps apart.
func Counters(deps auth.Deps) (NewCounter, error) {
	if deps.Shared == nil {
		return func(_ string, o throttle.Options) throttle.Counter { return throttle.Local(throttle.New(o)) }, nil
	}
	c, ok := deps.Shared.(SharedCounters)
	if !ok {
		return nil, errors.New("the shared state counts no failures: the password types need its failure counters")
	}
	return c.Counter, nil
}
