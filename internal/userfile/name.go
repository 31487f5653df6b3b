package userfile

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxNameLen is the longest user name accepted, in bytes.
const MaxNameLen = 256

// LogName bounds a typed user name for logs: at most MaxNameLen bytes of
// it, cut at a character boundary. Longer names are never users.
func LogName(name string) string {
	if len(name) <= MaxNameLen {
		return name
	}
	cut := MaxNameLen
	for cut > 0 && !utf8.RuneStart(name[cut]) {
		cut--
	}
	return name[:cut]
}

// ErrInvalidName is wrapped by every error ValidName returns, so callers can
// tell a bad name from other failures with errors.Is.
var ErrInvalidName = errors.New("invalid user name")

// ValidName reports why name cannot be a user name, or nil when it can.
//
// A name must be non-empty valid UTF-8 of at most MaxNameLen bytes, must not
// start with '#' (the line would read as a comment), and must not contain ':'
// (the field separator), whitespace, control characters or invisible
// formatting characters such as bidirectional overrides, which would let one
// name pass for another in logs and pages.
//
// The error never repeats the name, so it is safe to log whatever was given.
// ValidName does not fold case or normalise Unicode: "Alice" and "alice" are
// two different users, as they are for the login form.
func ValidName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("%w: it is empty", ErrInvalidName)
	case !utf8.ValidString(name):
		return fmt.Errorf("%w: it is not valid UTF-8", ErrInvalidName)
	case len(name) > MaxNameLen:
		return fmt.Errorf("%w: it is longer than %d bytes", ErrInvalidName, MaxNameLen)
	case strings.HasPrefix(name, "#"):
		return fmt.Errorf("%w: it starts with '#', which marks a comment line", ErrInvalidName)
	case strings.Contains(name, ":"):
		return fmt.Errorf("%w: it contains ':', the field separator", ErrInvalidName)
	}
	for _, r := range name {
		switch {
		case unicode.IsSpace(r):
			return fmt.Errorf("%w: it contains whitespace", ErrInvalidName)
		case unicode.IsControl(r):
			return fmt.Errorf("%w: it contains a control character", ErrInvalidName)
		case unicode.Is(unicode.Cf, r):
			return fmt.Errorf("%w: it contains an invisible formatting character", ErrInvalidName)
		}
	}
	return nil
}
