package userfile

import (
	"errors"
	"fmt"
	"strings"

	"github.com/backupweb/backupweb/internal/password"
)

// ErrUnsupportedHash is wrapped by the problem reported for a password value
// that is not a bcrypt hash while bcrypt hashes are required.
var ErrUnsupportedHash = errors.New("unsupported password value")

// ErrHashWithoutBcrypt is the problem reported for a bcrypt hash stored
// while bcrypt is off: it would be compared as a plain password, so the
// hash string itself would be accepted as the password.
var ErrHashWithoutBcrypt = errors.New("the value is a bcrypt hash but use_bcrypt is off, so the hash itself would be accepted as the password; set use_bcrypt = True in [authentication]")

// supported ends every unsupported-value message: what would be accepted and
// how to get it.
const supported = "supported: bcrypt $2a$, $2b$, $2y$ (set a new password with `backupweb user passwd` or `htpasswd -B`)"

// foreignHashes names the hash kinds people are likely to find in old user
// files, so the message says what the value is rather than only what it is
// not. The prefixes are fixed text: no part of the value is ever echoed.
var foreignHashes = []struct{ prefix, what string }{
	{"$apr1$", "an htpasswd MD5 ($apr1$) hash"},
	{"{SHA}", "an htpasswd SHA-1 ({SHA}) hash"},
	{"$2x$", "a bcrypt $2x$ hash (from a flawed old implementation)"},
	{"$2$", "an original bcrypt $2$ hash"},
	{"$1$", "an MD5-crypt ($1$) hash"},
	{"$5$", "a SHA-256-crypt ($5$) hash"},
	{"$6$", "a SHA-512-crypt ($6$) hash"},
	{"$y$", "a yescrypt ($y$) hash"},
	{"$argon2", "an Argon2 hash"},
	{"pbkdf2:", "a Werkzeug PBKDF2 hash"},
	{"scrypt:", "a Werkzeug scrypt hash"},
}

// checkValue returns nil when value may be stored for a user: non-empty and,
// when bcrypt is true, a well-formed bcrypt hash. Its errors describe the
// value's kind without repeating any of it.
func checkValue(value string, bcrypt bool) error {
	if value == "" {
		return errEmptyValue
	}
	if !bcrypt {
		if password.IsBcrypt(value) {
			// Compared as a plain password, the hash itself would log in:
			// whoever can read this file could sign in as the user.
			return ErrHashWithoutBcrypt
		}
		return nil
	}
	if hasBcryptPrefix(value) {
		if _, err := password.ParseHash(value); err != nil {
			// The reason names a length, a cost or a character class, never the value.
			var he *password.HashError
			if !errors.As(err, &he) {
				return fmt.Errorf("%w: %w", ErrUnsupportedHash, err)
			}
			return fmt.Errorf("%w: malformed bcrypt hash: %s", ErrUnsupportedHash, he.Reason)
		}
		return nil
	}
	if trimmed := strings.TrimSpace(value); trimmed != value && password.IsBcrypt(trimmed) {
		return fmt.Errorf("%w: whitespace between ':' and the bcrypt hash", ErrUnsupportedHash)
	}
	for _, h := range foreignHashes {
		if strings.HasPrefix(value, h.prefix) {
			return fmt.Errorf("%w: %s; %s", ErrUnsupportedHash, h.what, supported)
		}
	}
	if strings.HasPrefix(value, "$") {
		return fmt.Errorf("%w: an unknown kind of hash; %s", ErrUnsupportedHash, supported)
	}
	return fmt.Errorf("%w: not a hash (a plain password?) but use_bcrypt is on; %s", ErrUnsupportedHash, supported)
}

// hasBcryptPrefix reports whether s starts like a supported bcrypt hash.
func hasBcryptPrefix(s string) bool {
	for _, p := range []string{"$2a$", "$2b$", "$2y$"} {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}
