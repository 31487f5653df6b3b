// Package secondfactor is the second step of a sign-in with a password
// (type flask-login, second_factor = optional or required): the sealed
// pending state between a right password and the second factor, the TOTP
// step and recovery codes, the enrolment of a user who must have a
// factor, passkeys (their page, their registration, the passkey at the
// step and at the enrolment, and the passkey-only sign-in), and the
// password given again (reauth) that adding or removing a factor needs.
//
// A Step is made from a Config of the parts it is handed by the sign-in
// that owns it: the session guard, the users' state store, the keys of
// the factors, the single-use tokens, the passkey service, and small
// interfaces for what stays with the sign-in: who the users are (Users),
// the failure limits (Attempts), the sign-in page (Pages), the device
// cookie (Devices) and the password check (Passwords). The sign-in calls
// AfterPassword after a right password; Mount adds the step's routes.
//
// What it does not do: check passwords, count failures, keep sessions
// or read the users' file; it asks the sign-in for those. Its
// pages are templates of package ui.
package secondfactor

import (
	"context"
	"errors"
	"html/template"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/auth/sessionauth"
	"github.com/backupweb/backupweb/internal/factors"
	"github.com/backupweb/backupweb/internal/passkey"
	"github.com/backupweb/backupweb/internal/refusal"
	"github.com/backupweb/backupweb/internal/throttle"
	"github.com/backupweb/backupweb/internal/userstate"
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
	// Vouch is asked, at a sign-in with a passkey alone, whether user
	// may still sign in without a password (with users = ldap: asked of
	// the directory then) and what the session carries besides: ok false
	// refuses; an error (the users' source not answering) is answered as
	// an error, never as a yes.
	Vouch(ctx context.Context, user string) (attrs map[string]string, ok bool, err error)
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

// Config is what a Step is made of. Every field but Passkeys,
// DirectoryAttrs and Where is required.
type Config struct {
	// Type is the authentication type's name, for logs and counters.
	Type string
	// Guard owns the sessions, the cookies and the form tokens.
	Guard *sessionauth.Guard
	// Mode returns the second_factor in force (a reload may change it).
	Mode func() Mode
	// PasskeyLogin offers the passkey-only sign-in (passkey_login).
	PasskeyLogin bool
	// State keeps the users' factors; Keys seal their TOTP secrets and
	// hash their recovery codes.
	State userstate.Store
	Keys  *factors.Keys
	// Where names where State keeps them, for logs ("shared store" when
	// nil).
	Where func() string
	// Spend marks a single-use token used and reports whether it was
	// still unused; Spent tells whether one is (false when it cannot
	// say: Spend still decides).
	Spend func(ctx context.Context, kind, token string, ttl time.Duration) (bool, error)
	Spent func(ctx context.Context, kind, token string) (bool, error)
	// Passkeys runs the passkey ceremonies; nil: passkeys are not
	// offered.
	Passkeys *passkey.Service
	// DirectoryAttrs, when not nil (users = ldap), adds a directory
	// user's groups and e-mail address to a new session's attributes.
	DirectoryAttrs func(attrs map[string]string, groups []string, email string)

	Users     Users
	Attempts  Attempts
	Pages     Pages
	Devices   Devices
	Passwords Passwords

	Errs  *refusal.Errors
	Log   *slog.Logger
	Audit auth.Audit
	Now   func() time.Time
}

// Step is the second step of a sign-in. It is safe for concurrent use.
type Step struct {
	cfg Config
	// passkeySlot is what the second-factor page shows in its passkey
	// place; nil: nothing.
	passkeySlot func(r *http.Request, user string) template.HTML
	// begins limits the routes that keep state for a client not signed in
	// (per client address and in total); userBegins the passkey
	// registrations of signed-in users (per user).
	begins, userBegins *throttle.Rate
}

// New returns the step cfg describes.
func New(cfg Config) (*Step, error) {
	switch {
	case cfg.Guard == nil, cfg.Mode == nil, cfg.State == nil, cfg.Keys == nil, cfg.Spend == nil, cfg.Spent == nil,
		cfg.Users == nil, cfg.Attempts == nil, cfg.Pages == nil, cfg.Devices == nil, cfg.Passwords == nil,
		cfg.Errs == nil, cfg.Log == nil, cfg.Now == nil:
		return nil, errors.New("secondfactor: a required part of the configuration is missing")
	}
	s := &Step{
		cfg: cfg,
		begins: throttle.NewRate(throttle.RateOptions{Now: cfg.Now, OnTotal: func() {
			auth.LogBeginFlood(cfg.Log, cfg.Type, "passkey sign-ins")
		}}),
		userBegins: throttle.NewRate(throttle.RateOptions{Now: cfg.Now}),
	}
	if s.cfg.Where == nil {
		s.cfg.Where = func() string { return "shared store" }
	}
	if s.cfg.Passkeys != nil {
		s.passkeySlot = s.passkeySlotFor
	}
	return s, nil
}

// on reports whether second_factor is optional or required now.
func (s *Step) on() bool { return s.cfg.Mode() != Off }

// Passkeys returns the passkey service, nil when passkeys are not
// offered.
func (s *Step) Passkeys() *passkey.Service { return s.cfg.Passkeys }

// PasskeysOffered reports whether a signed-in user can manage passkeys
// now: passkeys are in use and second_factor is on.
func (s *Step) PasskeysOffered() bool { return s.cfg.Passkeys != nil && s.on() }

// Mount adds the step's routes to mux: the second-factor step and the
// enrolment (each answering 404 while second_factor is off), the
// password page of a step that needs the password again (ReauthPath),
// and, when passkeys are in use, the passkeys page and the passkey
// routes. signedIn puts the sign-in's gate for the routes of a signed-in
// user (where a machine token that is not valid gets its 401) in front
// of the routes it is given.
func (s *Step) Mount(mux sessionauth.Routes, signedIn func(sessionauth.Routes) sessionauth.Routes) {
	signed := signedIn(mux)
	signed.HandleFunc("GET "+ReauthPath, s.serveReauth)
	signed.HandleFunc("POST "+ReauthPath, s.serveReauthPost)
	s.mountPasskeys(signedIn(gate{mux, s}))
	on := gate{mux, s}
	on.HandleFunc("GET "+SecondFactorPath, s.serveSecondFactor)
	on.HandleFunc("POST "+SecondFactorPath, s.serveSecondFactorPost)
	on.HandleFunc("GET "+EnrolPath, s.serveEnrol)
	on.HandleFunc("POST "+EnrolPath, s.serveEnrolPost)
}

// gate adds routes of the second factor to mux: each answers 404, as
// an address no route takes, while second_factor is off (a reload turns
// them on and off with it).
type gate struct {
	mux sessionauth.Routes
	s   *Step
}

// HandleFunc adds h at pattern behind the gate.
func (g gate) HandleFunc(pattern string, h func(http.ResponseWriter, *http.Request)) {
	g.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		if !g.s.on() {
			g.s.cfg.Errs.Refuse(w, r, refusal.NoRoute)
			return
		}
		h(w, r)
	})
}
