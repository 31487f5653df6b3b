package passkey

import (
	"context"
	"time"

	"github.com/go-webauthn/webauthn/webauthn"
)

// Passkey is one registered credential of a user: the name the user gave
// it, when it was registered and last used, and go-webauthn's record of it
// (id, public key, sign count, flags), kept as the library writes it.
type Passkey struct {
	// Name is what the user called it ("Laptop", "YubiKey"), for the list.
	Name string
	// Created is when it was registered.
	Created time.Time
	// LastUsed is when it last completed a sign-in; zero: never.
	LastUsed time.Time
	// Credential is the credential record: ID, public key, sign count.
	Credential webauthn.Credential
}

// Keys is where passkeys are kept: per user, a WebAuthn user handle and
// the user's passkeys (the factors file beside the user file). The user
// handle is random, made once per user, and is what a discoverable
// credential names its user by: never the user name, which would leak to
// every authenticator and could be renamed.
//
// Errors mean the store could not answer (a file that cannot be read or
// written, a broken edit); callers then refuse, never admit. All methods
// are safe for concurrent use.
type Keys interface {
	// Handle returns user's WebAuthn user handle, making and storing one
	// when the user has none yet (create) or reporting ok=false (!create).
	Handle(ctx context.Context, user string, create bool) (handle []byte, ok bool, err error)
	// Owner returns the user whose handle is handle; ok=false: nobody's.
	Owner(ctx context.Context, handle []byte) (user string, ok bool, err error)
	// Passkeys returns user's passkeys, oldest first; none for an unknown
	// user.
	Passkeys(ctx context.Context, user string) ([]Passkey, error)
	// Stamp returns a value that changes whenever user's second factors
	// change (any kind, not only passkeys); "" when they have none. A
	// registration notes it when it begins.
	Stamp(ctx context.Context, user string) (string, error)
	// AddPasskey stores p for user, only while user's Stamp is still
	// since: otherwise (another factor was added or removed meanwhile) it
	// stores nothing and returns an error wrapping ErrFactorsChanged. The
	// check and the write are one step, under the store's lock. A
	// credential id already stored (for anyone) is refused with an error.
	AddPasskey(ctx context.Context, user string, p Passkey, since string) error
	// RemovePasskey removes user's passkey whose credential id is id and
	// reports whether there was one.
	RemovePasskey(ctx context.Context, user string, id []byte) (bool, error)
	// UsePasskey records a completed sign-in with user's passkey cred
	// (matched by cred.ID): its new sign count and flags, and at as its
	// last use. An unknown id is an error.
	UsePasskey(ctx context.Context, user string, cred webauthn.Credential, at time.Time) error
}
