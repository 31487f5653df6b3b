// Package password verifies the secrets of the basic and flask-login
// authentication types: bcrypt hashes as written by Apache's htpasswd ($2y$),
// Python's bcrypt ($2b$) and Go ($2a$), or, when bcrypt is switched off, a
// password stored in plain text.
//
// Verifying a bcrypt hash at the recommended work factor of 12 costs
// about a quarter of a second of CPU, so the package also holds what keeps
// that cost under control: a Gate that caps how many hashes are computed at
// once, a Verifier that remembers successful verifications for a short time
// (keyed by a per-process HMAC, never by the password itself), and a decoy
// hash so that an unknown user name costs the same work as a known one.
//
// The package does not decide who may log in, does not throttle failures
// (see package throttle) and never logs: errors it returns never contain a
// password or a hash.
package password

import (
	"errors"
	"fmt"

	"golang.org/x/crypto/bcrypt"
)

const (
	// Cost is the bcrypt work factor used for new hashes: the
	// recommended 12, as the Flask-era service used.
	Cost = 12
	// MinCost and MaxCost bound the work factors bcrypt accepts.
	MinCost = bcrypt.MinCost
	MaxCost = bcrypt.MaxCost
	// MaxLen is bcrypt's input limit in bytes. Longer passwords are never
	// hashed and never match: bcrypt would silently use only their first 72
	// bytes.
	MaxLen = 72
	// hashLen is the length of a modular-crypt bcrypt hash: "$2b$12$",
	// 22 characters of salt and 31 of digest.
	hashLen = 60
)

var (
	// ErrTooLong is returned by Hash for a password longer than MaxLen.
	ErrTooLong = errors.New("password: longer than 72 bytes, which bcrypt cannot hash")
	// ErrMalformedHash is wrapped by every error of ParseHash, so callers can
	// tell a broken stored value from a technical failure with errors.Is.
	ErrMalformedHash = errors.New("password: not a bcrypt hash (supported: $2a$, $2b$ or $2y$, cost 04 to 31, 60 characters)")
)

// bcryptAlphabet is the base-64 alphabet of bcrypt salts and digests; it
// differs from the standard one in order and has no padding.
const bcryptAlphabet = "./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

// inAlphabet[c] reports whether byte c belongs to bcryptAlphabet.
var inAlphabet = func() (t [256]bool) {
	for i := 0; i < len(bcryptAlphabet); i++ {
		t[bcryptAlphabet[i]] = true
	}
	return t
}()

// Hash returns the bcrypt hash of pw at the given cost, in Go's "$2a$" form
// (read by htpasswd, Python's bcrypt and this package alike). It refuses a
// password longer than MaxLen with ErrTooLong instead of hashing a prefix of
// it, and a cost outside MinCost..MaxCost instead of silently replacing it.
func Hash(pw []byte, cost int) (string, error) {
	if len(pw) > MaxLen {
		return "", ErrTooLong
	}
	if cost < MinCost || cost > MaxCost {
		return "", fmt.Errorf("password: cost %d is outside %d to %d", cost, MinCost, MaxCost)
	}
	h, err := bcrypt.GenerateFromPassword(pw, cost)
	if err != nil {
		return "", fmt.Errorf("password: hashing: %w", err)
	}
	return string(h), nil
}

// IsBcrypt reports whether s has the shape of a bcrypt hash that ParseHash
// accepts. It checks the form only: whether any password matches is not
// knowable without one.
func IsBcrypt(s string) bool {
	_, err := ParseHash(s)
	return err == nil
}

// ParseHash validates a stored bcrypt hash and returns its work factor.
//
// Accepted prefixes are "$2a$" (Go, older libraries), "$2b$" (Python's
// bcrypt, OpenBSD) and "$2y$" (Apache htpasswd -B, PHP); for passwords of at
// most 72 bytes the three compute the same function. "$2x$" (a buggy
// variant) and "$2$" are refused. After the prefix come a two-digit cost
// from 04 to 31, "$", and 53 characters of bcrypt base-64.
//
// Every error is a *HashError, which wraps ErrMalformedHash and says what
// shape was expected (length, prefix,
// cost, alphabet) without ever echoing the value, or its length: it is a
// secret.
func ParseHash(s string) (cost int, err error) {
	if len(s) != hashLen {
		// Never the length found: a plain password put here by mistake
		// would have its length told to whoever reads the logs.
		return 0, malformed("a bcrypt hash is exactly %d characters long", hashLen)
	}
	if s[0] != '$' || s[1] != '2' || s[3] != '$' {
		return 0, malformed("it does not start with a bcrypt prefix")
	}
	switch s[2] {
	case 'a', 'b', 'y':
	default:
		return 0, malformed("its bcrypt variant is not supported")
	}
	if !isDigit(s[4]) || !isDigit(s[5]) || s[6] != '$' {
		return 0, malformed("its cost is not two digits followed by $")
	}
	cost = int(s[4]-'0')*10 + int(s[5]-'0')
	if cost < MinCost || cost > MaxCost {
		return 0, malformed("its cost %d is outside %d to %d", cost, MinCost, MaxCost)
	}
	for i := 7; i < len(s); i++ {
		if !inAlphabet[s[i]] {
			return 0, malformed("its salt or digest holds a character outside bcrypt's base-64 alphabet")
		}
	}
	return cost, nil
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// HashError is a value that is not a bcrypt hash. It wraps
// ErrMalformedHash; Reason says what shape was expected, never the value.
type HashError struct {
	Reason string
}

func (e *HashError) Error() string { return ErrMalformedHash.Error() + ": " + e.Reason }

func (e *HashError) Unwrap() error { return ErrMalformedHash }

// malformed returns a *HashError with the reason format and args make.
func malformed(format string, args ...any) error {
	return &HashError{Reason: fmt.Sprintf(format, args...)}
}

// WeakCost is the cost below which a stored hash draws a warning.
const WeakCost = 10

// CostWarning returns the warning a stored hash of cost deserves, if any:
// one sentence, for check-config and start-up, with the command that makes
// a new hash (remedy). Every type warns with it, so the rule and the words
// live here once.
func CostWarning(cost int, remedy string) (string, bool) {
	if cost >= WeakCost {
		return "", false
	}
	return fmt.Sprintf("bcrypt cost %d is weak; the recommended cost is %d (%s)", cost, Cost, remedy), true
}

// PlainWarning is the warning a password stored in plain text deserves,
// with the command that makes a hash (remedy).
func PlainWarning(remedy string) string {
	return "stored in plain text: whoever reads the file can sign in; store hashes made by " + remedy + " and set use_bcrypt = true"
}
