// Package tokens is the tokens file: the machine tokens that let a script
// act as one user of the user file (type flask-login) with
// `Authorization: Bearer bwt_...`, instead of a browser's session.
//
// A token is "bwt_" followed by 32 random bytes in base64url (256 bits):
// it is printed once, when it is made, and only its SHA-256 is stored. A
// plain hash, not a keyed one, because a guess has a 2^-256 chance whatever
// the hash, so a copy of the file gives nothing to brute-force; and because
// the `token` command then writes the file without the service's secret
// key. The service finds a token by its hash in a map, so the time a lookup
// takes says nothing about which tokens exist, and no bcrypt work is spent
// on the request path.
//
// The file follows the user file's rules: mode 0600, rewritten atomically
// under a lock, read again when it changes. A file that does not parse, in
// any line, refuses every token (fail closed) until it is fixed.
package tokens

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Prefix starts every token, so that a token found in a log or a
// repository is recognised for what it is.
const Prefix = "bwt_"

// secretLen is the number of random bytes in a token: 256 bits.
const secretLen = 32

// tokenLen is the length of a token as written: the prefix and the
// base64url text of its random bytes.
var tokenLen = len(Prefix) + base64.RawURLEncoding.EncodedLen(secretLen)

// Hash is the SHA-256 of a token, the only thing of it that is stored.
type Hash [sha256.Size]byte

// HashOf returns the hash of token.
func HashOf(token string) Hash { return sha256.Sum256([]byte(token)) }

// Wellformed reports whether s has the shape of a token: the prefix and
// base64url text of the right length. A malformed value is refused before
// any lookup.
func Wellformed(s string) bool {
	if len(s) != tokenLen || !strings.HasPrefix(s, Prefix) {
		return false
	}
	for _, c := range s[len(Prefix):] {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// Token is one stored token: who it acts as, what it may do, and the hash
// of its secret. It never holds the token itself.
type Token struct {
	// ID names the token in lists and revocations. It is random, not
	// derived from the secret.
	ID    string `json:"id"`
	User  string `json:"user"`
	Label string `json:"label,omitempty"`
	// Created and Expires (zero: never) are in UTC.
	Created time.Time `json:"created"`
	Expires time.Time `json:"expires,omitzero"`
	// ReadOnly allows GET and HEAD only; Path, when set, only paths under
	// that prefix.
	ReadOnly bool   `json:"read_only,omitempty"`
	Path     string `json:"path,omitempty"`
	// LastUsed is when the token was last seen, written at most once a
	// minute (see Store.Used), so it is approximate by that much.
	LastUsed time.Time `json:"last_used,omitzero"`
	// Hash is the SHA-256 of the token, hexadecimal.
	Hash string `json:"hash"`
}

// Scope returns what the token may do.
func (t *Token) Scope() Scope { return Scope{ReadOnly: t.ReadOnly, Path: t.Path} }

// Expired reports whether the token has expired at now.
func (t *Token) Expired(now time.Time) bool { return !t.Expires.IsZero() && !now.Before(t.Expires) }

// Scope limits what a token may do: ReadOnly allows GET and HEAD only,
// Path only paths under that prefix. The service checks it before the
// access rules (access.Scope).
type Scope struct {
	ReadOnly bool
	Path     string
}

// New makes a token for t: it fills in t's ID, Created (at now) and Hash
// and returns the token, which must be shown once and never stored.
func New(t *Token, now time.Time) (string, error) {
	secret := make([]byte, secretLen)
	id := make([]byte, 6)
	if _, err := rand.Read(secret); err != nil {
		return "", fmt.Errorf("tokens: reading random bytes: %w", err)
	}
	if _, err := rand.Read(id); err != nil {
		return "", fmt.Errorf("tokens: reading random bytes: %w", err)
	}
	token := Prefix + base64.RawURLEncoding.EncodeToString(secret)
	h := HashOf(token)
	t.ID = hex.EncodeToString(id)
	t.Created = now.UTC().Truncate(time.Second)
	t.Hash = hex.EncodeToString(h[:])
	return token, nil
}

// ParseDuration reads a token lifetime: a Go duration ("720h") or a whole
// number of days ("90d"). It must be positive.
func ParseDuration(s string) (time.Duration, error) {
	var d time.Duration
	if n, ok := strings.CutSuffix(s, "d"); ok {
		days, err := strconv.Atoi(n)
		if err != nil {
			return 0, fmt.Errorf("tokens: %q is not a duration (write 90d or 720h)", s)
		}
		d = time.Duration(days) * 24 * time.Hour
	} else {
		var err error
		if d, err = time.ParseDuration(s); err != nil {
			return 0, fmt.Errorf("tokens: %q is not a duration (write 90d or 720h)", s)
		}
	}
	if d <= 0 {
		return 0, fmt.Errorf("tokens: the lifetime %q is not positive", s)
	}
	return d, nil
}

// sortByCreated sorts list oldest first, then by id.
func sortByCreated(list []Token) {
	slices.SortFunc(list, func(a, b Token) int {
		if c := a.Created.Compare(b.Created); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
}
