package password

import "context"

// Matcher compares a password with a stored value. Which one a type uses
// is chosen once, when its configuration is loaded (use_bcrypt), not
// passed along with every check: NewMatcher.
type Matcher interface {
	// Match reports whether pw matches stored. ok false with a nil error
	// means "no"; an error means the check could not be made (see
	// Verifier.Check).
	Match(ctx context.Context, stored string, pw []byte) (ok bool, err error)
	// Decoy spends on pw the work a failed Match against a stored value
	// of the given bcrypt cost costs, and reports only technical errors:
	// what a caller runs for an unknown user name, so that the answer
	// takes as long as for a known one.
	Decoy(ctx context.Context, cost int, pw []byte) error
	// Bcrypt reports whether stored values are bcrypt hashes.
	Bcrypt() bool
	// Cached reports whether pw is known to match stored without any
	// costly work: a verification remembered by the cache. It never says
	// "no": false means "not known", and the caller runs Match (counted
	// by its throttle) to find out. A credential answered from the cache
	// needs no attempt slot, since it cannot be a guess.
	Cached(ctx context.Context, stored string, pw []byte) bool
}

// NewMatcher returns the bcrypt Matcher over v (stored values are bcrypt
// hashes, checked through v's gate and cache) when bcrypt is true, else
// the plain one (stored values are the passwords, compared in constant
// time).
func NewMatcher(bcrypt bool, v *Verifier) Matcher {
	if bcrypt {
		return bcryptMatcher{v}
	}
	return plainMatcher{}
}

type bcryptMatcher struct{ v *Verifier }

func (m bcryptMatcher) Match(ctx context.Context, stored string, pw []byte) (bool, error) {
	return m.v.verify(ctx, stored, pw, true)
}

func (m bcryptMatcher) Decoy(ctx context.Context, cost int, pw []byte) error {
	return m.v.CheckDecoy(ctx, cost, pw)
}

func (bcryptMatcher) Bcrypt() bool { return true }

func (m bcryptMatcher) Cached(ctx context.Context, stored string, pw []byte) bool {
	return m.v.Cached(ctx, stored, pw)
}

type plainMatcher struct{}

func (plainMatcher) Match(_ context.Context, stored string, pw []byte) (bool, error) {
	return plainEqual(stored, pw), nil
}

// Decoy compares pw with nothing, as Match does: the comparison takes the
// same time whatever it is given.
func (plainMatcher) Decoy(_ context.Context, _ int, pw []byte) error {
	plainEqual("", pw)
	return nil
}

func (plainMatcher) Bcrypt() bool { return false }

// Cached is always false: plain values are not cached, every check is
// counted.
func (plainMatcher) Cached(context.Context, string, []byte) bool { return false }
