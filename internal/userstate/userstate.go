// Package userstate is where a flask-login user's own state lives: the
// second factors (the TOTP secret, sealed; recovery codes, hashed;
// passkeys with their credential id, public key and sign count) and the
// machine tokens. The user file and the groups file are not part of it:
// they stay files the operator distributes.
//
// Store is the one interface the sign-in, the account page and the
// commands use. FileStore keeps the state in the factors file and the
// tokens file beside the user file (one instance); redisstore's UserState
// keeps it in Redis, shared by every instance that names the same server
// and prefix. Both run the conformance test in package storetest.
//
// Every implementation fails closed: a record it cannot read (a line that
// does not parse, a MAC that fails, a TOTP secret sealed under a key it
// does not hold) is an error wrapping ErrBroken, never "no factor"; a
// store that cannot be reached is an error whose Unavailable method
// reports true (answered 503 with Retry-After).
package userstate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/backupweb/backupweb/internal/factors"
	"github.com/backupweb/backupweb/internal/tokens"
)

// Store keeps every user's second factors and machine tokens. All methods
// are safe for concurrent use, by several goroutines and, for a shared
// implementation, by several processes.
type Store interface {
	// Factors returns a copy of user's factors record, nil when they have
	// none. A record that cannot be used is an error wrapping ErrBroken.
	Factors(ctx context.Context, user string) (*factors.Record, error)
	// Status says whether user has a factor, without opening the record:
	// it is what a signed-in request may ask, and must be cheap. Broken
	// is reported as the status, not as an error; an error means the
	// store could not answer.
	Status(ctx context.Context, user string) (factors.Status, error)
	// EditFactors changes user's record in one atomic step: fn gets a
	// copy (a new Record with only User set when there is none) and, when
	// it returns nil, what it left is stored (a record with nothing in it
	// is removed). An error from fn stores nothing and is returned; so is
	// ErrBroken for a record that cannot be read (only ResetFactors
	// clears one). fn may run more than once (a shared store runs it
	// again on the record that won a race): it must set what it reports
	// afresh on every run.
	EditFactors(ctx context.Context, user string, fn func(*factors.Record) error) error
	// ResetFactors removes user's record, readable or not, and reports
	// whether there was one.
	ResetFactors(ctx context.Context, user string) (bool, error)
	// Owner returns the user whose WebAuthn user handle is handle.
	Owner(ctx context.Context, handle []byte) (user string, ok bool, err error)
	// UsePasskey records a sign-in with user's passkey id at count: in one
	// atomic step, count is compared with the stored sign count and, only
	// when it is above it (or both are 0), stored with credential (the
	// credential's new JSON) and at as its last use. A count that is not
	// above is ErrCountNotAbove; an id user does not hold is
	// ErrNoSuchPasskey.
	UsePasskey(ctx context.Context, user string, id []byte, count uint32, credential json.RawMessage, at time.Time) error

	// Token finds a machine token by its value (only its hash is
	// looked up).
	Token(ctx context.Context, token string) (*tokens.Token, tokens.Status, error)
	// TokensOf returns user's tokens, oldest first.
	TokensOf(ctx context.Context, user string) ([]tokens.Token, error)
	// AllTokens returns every user's tokens (for export).
	AllTokens(ctx context.Context) ([]tokens.Token, error)
	// AddToken stores t (made by tokens.New). A token whose id or hash is
	// stored already is refused.
	AddToken(ctx context.Context, t tokens.Token) error
	// RevokeToken removes the token id of user (any user's when user is
	// "") and returns it; tokens.ErrNoToken when there is none.
	RevokeToken(ctx context.Context, user, id string) (tokens.Token, error)
	// RevokeTokensOf removes every token of user and returns how many.
	RevokeTokensOf(ctx context.Context, user string) (int, error)
	// TokenUsed notes a use of t from the client address addr at at: the
	// last-used time, written coarsely (at most once a minute per token),
	// never on every request. It reports whether addr is new for t in this
	// process (its first use from there, which the caller logs).
	TokenUsed(ctx context.Context, t *tokens.Token, addr string, at time.Time) (newAddr bool)

	// Users returns the users that have a readable factors record (for
	// export and rotation).
	Users(ctx context.Context) ([]string, error)
}

// ErrBroken is wrapped by every error about a record that exists but
// cannot be used. Such a user cannot sign in until the record is fixed or
// their factors are reset.
var ErrBroken = errors.New("userstate: the user's stored factors cannot be used")

// ErrCountNotAbove refuses a passkey assertion whose sign count is not
// above the stored one: a cloned authenticator, or a replay.
var ErrCountNotAbove = errors.New("userstate: the passkey's sign count is not above the stored one")

// ErrNoSuchPasskey is returned by UsePasskey for a credential id the user
// does not hold.
var ErrNoSuchPasskey = errors.New("userstate: the user holds no passkey with this credential id")

// ErrUnchanged ends an EditFactors whose fn has nothing to store; it is
// not returned to the caller.
var ErrUnchanged = errors.New("userstate: nothing to change")

// BrokenError names whose record cannot be used and where; it wraps
// ErrBroken and the cause, never the record's content.
type BrokenError struct {
	User  string
	Where string // a file and line, or a Redis key
	Err   error
}

func (e *BrokenError) Error() string {
	return fmt.Sprintf("userstate: the factors of %s (%s) cannot be used: %v", e.User, e.Where, e.Err)
}

// Unwrap returns ErrBroken and the cause.
func (e *BrokenError) Unwrap() []error { return []error{ErrBroken, e.Err} }

// CountAllowed reports whether a passkey assertion with sign count next
// may follow the stored count: above it, or both 0 (an authenticator
// that keeps no count).
func CountAllowed(stored, next uint32) bool {
	return next > stored || next == 0 && stored == 0
}

// SignCount reads the sign count from a credential as go-webauthn writes
// it (its "authenticator" object's "signCount"; absent: 0).
func SignCount(credential json.RawMessage) (uint32, error) {
	var c struct {
		Authenticator struct {
			SignCount uint32 `json:"signCount"`
		} `json:"authenticator"`
	}
	if err := json.Unmarshal(credential, &c); err != nil {
		return 0, fmt.Errorf("userstate: the stored credential is not valid JSON: %w", err)
	}
	return c.Authenticator.SignCount, nil
}

// WithSignCount returns credential with its sign count set to n, every
// other field as it was.
func WithSignCount(credential json.RawMessage, n uint32) (json.RawMessage, error) {
	var c map[string]json.RawMessage
	if err := json.Unmarshal(credential, &c); err != nil {
		return nil, fmt.Errorf("userstate: the stored credential is not a JSON object: %w", err)
	}
	a := map[string]json.RawMessage{}
	if raw, ok := c["authenticator"]; ok {
		if err := json.Unmarshal(raw, &a); err != nil {
			return nil, fmt.Errorf("userstate: the stored credential's authenticator is not a JSON object: %w", err)
		}
	}
	a["signCount"], _ = json.Marshal(n)
	c["authenticator"], _ = json.Marshal(a)
	return json.Marshal(c)
}
