package throttle

import "time"

// Defaults of RateOptions: what one client address (or one signed-in
// user) and the whole process may begin, sign-ins or passkey ceremonies
// that keep state on the server until they end or expire.
const (
	DefaultRatePerKey = 20
	DefaultRateTotal  = 300
	DefaultRateWindow = time.Minute
	// DefaultRateKeys bounds the keys a Rate tracks: a few megabytes.
	DefaultRateKeys = 10_000
)

// RateOptions configure NewRate. The zero value gives the defaults.
type RateOptions struct {
	// PerKey is how many begins one key may make in quick succession;
	// it then makes PerKey per Window. Default DefaultRatePerKey.
	PerKey int
	// Total is the same for every key together. Default DefaultRateTotal.
	Total int
	// Window is the time over which PerKey and Total drain. Default
	// DefaultRateWindow.
	Window time.Duration
	// MaxKeys bounds the keys tracked. Default DefaultRateKeys.
	MaxKeys int
	// Now is the clock. Default time.Now.
	Now func() time.Time
	// OnTotal, when set, is called by the take that brings the total to
	// its limit: every key is then refused for a Window, which an
	// operator should hear of once, not once per refusal.
	OnTotal func()
}

// Rate limits how often each key, and all keys together, may do
// something that costs the server memory, however it turns out: a key
// that reaches its limit, or every key once the total reaches its own, is
// refused for one Window. It is a Limiter per key and one for the total,
// with every take counted as a failure and no backoff.
// It is safe for concurrent use and keeps its counts in this process:
// what it protects is this process's memory.
type Rate struct {
	perKey  *Limiter
	total   *Limiter
	onTotal func()
}

// NewRate returns a Rate configured by o.
func NewRate(o RateOptions) *Rate {
	if o.PerKey <= 0 {
		o.PerKey = DefaultRatePerKey
	}
	if o.Total <= 0 {
		o.Total = DefaultRateTotal
	}
	if o.Window <= 0 {
		o.Window = DefaultRateWindow
	}
	if o.MaxKeys <= 0 {
		o.MaxKeys = DefaultRateKeys
	}
	mk := func(n, keys int) *Limiter {
		// A block of one Window, never doubled: a key that keeps going
		// gets n begins per Window, and is never shut out for longer.
		return New(Options{Max: n, Window: o.Window, Block: o.Window, MaxBlock: o.Window, MaxKeys: keys, Now: o.Now})
	}
	return &Rate{perKey: mk(o.PerKey, o.MaxKeys), total: mk(o.Total, 1), onTotal: o.OnTotal}
}

// Take counts one begin of key and reports whether it may go ahead; when
// not, retryAfter is how long until it may. A refused take is not counted.
func (r *Rate) Take(key string) (ok bool, retryAfter time.Duration) {
	if ok, after := r.perKey.allow(key); !ok {
		return false, after
	}
	if ok, after := r.total.allow(""); !ok {
		return false, after
	}
	r.perKey.record(key)
	r.total.record("")
	if ok, _ := r.total.allow(""); !ok && r.onTotal != nil {
		r.onTotal()
	}
	return true, 0
}
