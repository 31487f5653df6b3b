package basic

import (
	"encoding/base64"
	"errors"
	"strings"
)

// Errors of ParseAuthorization.
var (
	// ErrNoCredentials means the request carries no Basic credentials at
	// all: not an attempt, just a client that has not been challenged yet.
	ErrNoCredentials = errors.New("basic: no credentials")
	// ErrMalformed means an Authorization header names the Basic scheme but
	// its value cannot be decoded.
	ErrMalformed = errors.New("basic: malformed credentials")
)

// maxHeader bounds the credentials we decode: a user name and a password of
// bcrypt's 72 bytes fit many times over.
const maxHeader = 4096

// ParseAuthorization extracts the user name and password from the value of
// an Authorization header using the Basic scheme (RFC 7617): the scheme
// name in any case, one or more spaces, then base64 of "user:password"
// (standard alphabet; missing padding tolerated). The password is
// everything after the first colon, so it may hold colons itself.
//
// An empty header, or one naming another scheme, gives ErrNoCredentials;
// a Basic header that does not decode gives ErrMalformed.
func ParseAuthorization(header string) (username, password string, err error) {
	scheme, rest, _ := strings.Cut(strings.TrimLeft(header, " \t"), " ")
	if !strings.EqualFold(scheme, "Basic") {
		return "", "", ErrNoCredentials
	}
	rest = strings.Trim(rest, " \t")
	if rest == "" || len(rest) > maxHeader {
		return "", "", ErrMalformed
	}
	raw, err := base64.StdEncoding.DecodeString(rest)
	if err != nil {
		raw, err = base64.RawStdEncoding.DecodeString(rest)
		if err != nil {
			return "", "", ErrMalformed
		}
	}
	username, password, ok := strings.Cut(string(raw), ":")
	if !ok {
		return "", "", ErrMalformed
	}
	return username, password, nil
}
