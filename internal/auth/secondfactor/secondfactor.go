// Package secondfactor is the second step of a sign-in with a password
// (type flask-login, second_factor = optional or required): the sealed
// pending state between a right password and the second factor, the TOTP
// step and recovery codes, the enrolment of a user who must have a
// factor, passkeys (their page, their registration, the passkey at the
// step and at the enrolment, and the passkey-only sign-in), and the
// password given again (reauth) that adding or removing a factor needs.
//
// It is handed what stays with the sign-in through small interfaces: who
// the users are (Users), the failure limits (Attempts), the sign-in page
// (Pages), the device cookie (Devices) and the password check
// (Passwords).
//
// What it does not do: check passwords, count failures, keep sessions
// or read the users' file; it asks the sign-in for those. Its
// pages are templates of package ui.
package secondfactor

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/backupweb/backupweb/internal/refusal"
)

// Mode is the value of second_factor.
type Mode int

const (
	// Off: the password alone signs in, as before (default).
	Off Mode = iota
	// Optional: users who have a second factor must give it; the others
	// sign in with their password.
	Optional
	// Required: every user must give a second factor; a user without one
	// enrols right after the password, before anything else.
	Required
)

// String returns the configuration's spelling.
func (m Mode) String() string {
	switch m {
	case Optional:
		return "optional"
	case Required:
		return "required"
	default:
		return "off"
	}
}

// ParseMode reads a second_factor value: off (or empty), optional or
// required.
func ParseMode(v string) (Mode, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "", "off":
		return Off, nil
	case "optional":
		return Optional, nil
	case "required":
		return Required, nil
	}
	return Off, errors.New("must be off, optional or required")
}

// Users is who may sign in, as the sign-in knows them.
type Users interface {
	// Admits reports whether cred is still the credential fingerprint
	// of user's password: false for a user removed or whose password
	// changed.
	Admits(user, cred string) bool
	// Cred returns user's credential fingerprint; false for a name that
	// is not a user.
	Cred(user string) (string, bool)
}

// Attempts are the sign-in's failure limits, which a second factor
// counts against as a password does.
type Attempts interface {
	// Count runs check as one attempt of user, counted against the
	// limits of the client address and of the name or device (the
	// address's alone when user is ""): a "no" is a failure, a "yes" or
	// an error gives the slots back. An error is a refusal (429) or
	// check's.
	Count(r *http.Request, user string, check func(context.Context) (bool, error)) (bool, error)
	// Forget forgets the failures of user's name or device after a
	// good sign-in.
	Forget(r *http.Request, user string)
	// AdmitAddr returns a refusal when the client address is blocked
	// for its failures (nothing is counted).
	AdmitAddr(r *http.Request) error
}

// Pages are the sign-in's answers the step shows.
type Pages interface {
	// Login writes the sign-in page with the refusal rp (JSON for a
	// client that asks for it); user is the name shown again.
	Login(w http.ResponseWriter, r *http.Request, rp refusal.Reply, user, next string)
	// ReplyTo is refusal.ReplyTo(err) for a page of the sign-in: it sets
	// Retry-After and logs an unexpected error with msg. ok is false for
	// an abandoned request, which gets nothing.
	ReplyTo(w http.ResponseWriter, r *http.Request, err error, msg string) (rp refusal.Reply, ok bool)
}

// Devices issues the device cookie of a browser that signed in.
type Devices interface {
	Issue(w http.ResponseWriter, r *http.Request, user string)
}

// Passwords checks a signed-in user's password given again.
type Passwords interface {
	// Check reports whether pw is user's password, the user spelt as
	// the session spells them.
	Check(ctx context.Context, user, pw string) (bool, error)
}
