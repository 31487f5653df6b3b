package factors

import (
	"encoding/json"
	"slices"
	"time"
)

// Status is what the factors file says about one user.
type Status int

const (
	// None: the file holds no factor for the user.
	None Status = iota
	// Enrolled: the user has at least one factor (TOTP or a passkey).
	Enrolled
	// Broken: the file cannot say; the user's record, or a line that could
	// be theirs, does not parse or does not decrypt. Such a user must not
	// sign in until the file is fixed or their factors are reset.
	Broken
)

// String returns "none", "enrolled" or "broken".
func (s Status) String() string {
	switch s {
	case None:
		return "none"
	case Enrolled:
		return "enrolled"
	default:
		return "broken"
	}
}

// Record is one user's factors. A Record read from a Set must not be
// modified: copy it with Clone first.
type Record struct {
	// User is the user name, as in the user file.
	User string `json:"-"`
	// TOTP is the user's TOTP enrolment, nil when there is none.
	TOTP *TOTP `json:"totp,omitempty"`
	// Recovery holds the sealed digests of the unused recovery codes
	// (see Keys.NewRecoveryCodes), or their keyed hashes when they were
	// made before codes were sealed (Keys.HashRecovery).
	Recovery []string `json:"recovery,omitempty"`
	// Handle is the WebAuthn user handle: random, made once per user and
	// kept while the record exists.
	Handle []byte `json:"handle,omitempty"`
	// Passkeys are the user's registered passkeys.
	Passkeys []Passkey `json:"passkeys,omitempty"`
}

// TOTP is a TOTP enrolment.
type TOTP struct {
	// Sealed is the secret encrypted by Keys.SealTOTP; never the secret
	// itself.
	Sealed string `json:"secret"`
	// Added is when it was enrolled.
	Added time.Time `json:"added"`
}

// Passkey is one registered WebAuthn credential.
type Passkey struct {
	// Name is what the user called it.
	Name string `json:"name"`
	// Created is when it was registered.
	Created time.Time `json:"created"`
	// ID is the credential id.
	ID []byte `json:"id"`
	// Credential is the credential as the WebAuthn library stores it
	// (opaque to this package; JSON).
	Credential json.RawMessage `json:"credential"`
	// LastUsed is when it last completed a sign-in; zero: never.
	LastUsed time.Time `json:"last_used,omitzero"`
}

// HasFactor reports whether r holds a factor that can complete a sign-in
// on its own: a TOTP secret or a passkey. Recovery codes stand in for a
// lost factor; they are not one.
func (r *Record) HasFactor() bool {
	return r != nil && (r.TOTP != nil || len(r.Passkeys) > 0)
}

// Clone returns a deep copy of r.
func (r *Record) Clone() *Record {
	if r == nil {
		return nil
	}
	c := *r
	if r.TOTP != nil {
		t := *r.TOTP
		c.TOTP = &t
	}
	c.Recovery = slices.Clone(r.Recovery)
	c.Handle = slices.Clone(r.Handle)
	c.Passkeys = make([]Passkey, len(r.Passkeys))
	for i, p := range r.Passkeys {
		p.ID = slices.Clone(p.ID)
		p.Credential = slices.Clone(p.Credential)
		c.Passkeys[i] = p
	}
	if r.Passkeys == nil {
		c.Passkeys = nil
	}
	return &c
}

// empty reports whether r holds nothing worth a line: no factor, no
// recovery code, no passkey and no handle (a handle alone is kept, so that
// it stays stable between the two steps of a passkey registration).
func (r *Record) empty() bool {
	return r.TOTP == nil && len(r.Recovery) == 0 && len(r.Passkeys) == 0 && len(r.Handle) == 0
}
