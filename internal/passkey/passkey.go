// Package passkey signs users in with passkeys (WebAuthn), over
// github.com/go-webauthn/webauthn: a signed-in user registers passkeys;
// after a right password a passkey completes the sign-in as the second
// factor; and, when the operator allows it, a discoverable passkey alone
// signs a user in.
//
// The relying party is the service at [server] public_url: its host is the
// RP id and its origin the only origin an answer is accepted from, so a
// look-alike site that relays the pages (phishing) gets an answer the
// server refuses, and a passkey made for another site is never offered
// here. Each ceremony's challenge is kept server-side (Ceremonies, in the
// session store, so every instance sharing a Redis store agrees), lives
// CeremonyTTL and is used once. Passkeys themselves live in Keys (the
// factors file).
//
// A sign count that does not increase (two copies of one credential in
// use) refuses the sign-in, as go-webauthn's CloneWarning recommends
// Relying Parties to weigh; authenticators that keep no count (synced
// passkeys report 0) are not affected.
//
// What it does not do: accept attestation-based policies (no attestation
// is asked for: any authenticator the user holds is welcome), keep
// sessions (package session does), or count failures (the caller counts
// failed assertions against the same throttle as passwords).
package passkey

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"time"

	"github.com/go-webauthn/webauthn/protocol"
	"github.com/go-webauthn/webauthn/webauthn"

	"github.com/backupweb/backupweb/internal/userstate"
)

// Options configure a Service.
type Options struct {
	// PublicURL is [server] public_url: its host is the RP id, its origin
	// the one accepted origin. Required, with a host name (not an IP
	// address, which browsers refuse as RP id).
	PublicURL *url.URL
	// Name is the relying party's name authenticators may show, such as
	// the product name. Default "backupweb".
	Name string
	// Keys keeps the passkeys. Required.
	Keys Keys
	// Ceremonies keeps begun ceremonies. Required.
	Ceremonies *Ceremonies
	// Now is the clock of LastUsed and Created. Default time.Now.
	Now func() time.Time
}

// Service runs the registration and sign-in ceremonies. It is safe for
// concurrent use.
type Service struct {
	o  Options
	wa *webauthn.WebAuthn
}

// Verdict is the answer to a finished ceremony when nothing broke: OK, or
// why not. Reason is a fixed sentence for logs; Detail is go-webauthn's
// explanation, for the operator's log only.
type Verdict struct {
	OK     bool
	Reason string
	Detail string
	// Cloned is set when the credential's sign count did not increase.
	Cloned bool
	// User is the user signed in (FinishDiscoverable) or registered for;
	// on a refusal, the user whose passkey was refused when known (for
	// the log only).
	User string
	// Next is where the browser was going when the ceremony began.
	Next string
}

// Reasons of a refused ceremony (Verdict.Reason).
const (
	ReasonNoCeremony = "no such ceremony (unknown, expired or used)"
	ReasonRejected   = "the authenticator's answer was rejected"
	ReasonUnknown    = "the credential is not registered"
	ReasonCloned     = "the credential's sign count did not increase (possibly cloned)"
)

// ErrNoPasskeys is returned by BeginLogin for a user without passkeys.
var ErrNoPasskeys = errors.New("passkey: the user has no passkeys")

// ErrFactorsChanged is returned by FinishRegistration when the user's
// second factors changed since the registration began (another enrolment
// finished first): nothing is stored. Of two enrolments of one user at
// once, exactly one is stored.
var ErrFactorsChanged = errors.New("passkey: the user's second factors changed since the registration began")

// RPID returns the relying-party id public_url gives: its host, which must
// be a host name (browsers refuse IP addresses); a host that cannot be
// one is an *RPIDError.
func RPID(public *url.URL) (string, error) {
	if public == nil {
		return "", errors.New("passkey: [server] public_url is not set; passkeys need it: set it to the address users reach the service at, such as https://backups.example.com")
	}
	host := public.Hostname()
	if err := protocol.ValidateRPID(host); err != nil {
		return "", &RPIDError{URL: public, Host: host, Err: err}
	}
	return host, nil
}

// RPIDError is RPID's error for a public URL whose host cannot be a
// relying-party id (an IP address, say). Problem is the sentence a
// configuration check records at its own key; Error adds the package.
type RPIDError struct {
	URL  *url.URL
	Host string
	// Err is WebAuthn's reason.
	Err error
}

// Problem says what is wrong and how to fix it, without the package's
// name: the text check-config shows at the key.
func (e *RPIDError) Problem() string {
	return fmt.Sprintf("[server] public_url %s: its host %q cannot be a passkey's relying-party id (%v); use a host name, such as https://backups.example.com, or http://localhost for a test", e.URL, e.Host, e.Err)
}

func (e *RPIDError) Error() string { return "passkey: " + e.Problem() }

// Unwrap returns WebAuthn's reason.
func (e *RPIDError) Unwrap() error { return e.Err }

// New returns a Service for o.
func New(o Options) (*Service, error) {
	rpid, err := RPID(o.PublicURL)
	if err != nil {
		return nil, err
	}
	if o.Keys == nil || o.Ceremonies == nil {
		return nil, errors.New("passkey: Keys and Ceremonies are required")
	}
	if o.Name == "" {
		o.Name = "backupweb"
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	origin := o.PublicURL.Scheme + "://" + o.PublicURL.Host
	wa, err := webauthn.New(&webauthn.Config{
		RPID:                  rpid,
		RPDisplayName:         o.Name,
		RPOrigins:             []string{origin},
		AttestationPreference: protocol.PreferNoAttestation,
		AuthenticatorSelection: protocol.AuthenticatorSelection{
			ResidentKey:      protocol.ResidentKeyRequirementPreferred,
			UserVerification: protocol.VerificationPreferred,
		},
		Timeouts: webauthn.TimeoutsConfig{
			Login:        webauthn.TimeoutConfig{Timeout: 2 * time.Minute, TimeoutUVD: 2 * time.Minute},
			Registration: webauthn.TimeoutConfig{Timeout: 2 * time.Minute, TimeoutUVD: 2 * time.Minute},
		},
	})
	if err != nil {
		return nil, fmt.Errorf("passkey: %w", err)
	}
	return &Service{o: o, wa: wa}, nil
}

// Origin returns the one origin answers are accepted from.
func (s *Service) Origin() string { return s.o.PublicURL.Scheme + "://" + s.o.PublicURL.Host }

// account is a user as go-webauthn sees one.
type account struct {
	name   string
	handle []byte
	keys   []Passkey
}

func (a *account) WebAuthnID() []byte          { return a.handle }
func (a *account) WebAuthnName() string        { return a.name }
func (a *account) WebAuthnDisplayName() string { return a.name }
func (a *account) WebAuthnCredentials() []webauthn.Credential {
	out := make([]webauthn.Credential, len(a.keys))
	for i, k := range a.keys {
		out[i] = k.Credential
	}
	return out
}

// load returns user as an account; create makes a user handle when there
// is none.
func (s *Service) load(ctx context.Context, user string, create bool) (*account, bool, error) {
	h, ok, err := s.o.Keys.Handle(ctx, user, create)
	if err != nil || !ok {
		return nil, false, err
	}
	keys, err := s.o.Keys.Passkeys(ctx, user)
	if err != nil {
		return nil, false, err
	}
	return &account{name: user, handle: h, keys: keys}, true, nil
}

// Passkeys returns user's passkeys, for the list.
func (s *Service) Passkeys(ctx context.Context, user string) ([]Passkey, error) {
	return s.o.Keys.Passkeys(ctx, user)
}

// Owner returns the user whose WebAuthn user handle is handle.
func (s *Service) Owner(ctx context.Context, handle []byte) (string, bool, error) {
	return s.o.Keys.Owner(ctx, handle)
}

// Remove removes user's passkey whose credential id is id.
func (s *Service) Remove(ctx context.Context, user string, id []byte) (bool, error) {
	return s.o.Keys.RemovePasskey(ctx, user, id)
}

// Begun is a begun ceremony: the options the browser passes to
// navigator.credentials (as go-webauthn writes them: {"publicKey": ...})
// and the id the browser must present to finish it.
type Begun struct {
	Options json.RawMessage
	ID      string
}

// BeginRegistration begins adding a passkey for user, signed in. Passkeys
// the user has already are excluded, so one authenticator is not added
// twice. The user's factors stamp (Keys.Stamp) is noted now, or, when
// first is set (an enrolment of a user who must have no factor yet), ""
// is: FinishRegistration stores the passkey only while the stamp is
// unchanged.
func (s *Service) BeginRegistration(ctx context.Context, user string, first bool) (Begun, error) {
	stamp := ""
	if !first {
		var err error
		if stamp, err = s.o.Keys.Stamp(ctx, user); err != nil {
			return Begun{}, fmt.Errorf("passkey: reading the factors of %q: %w", user, err)
		}
	}
	a, _, err := s.load(ctx, user, true)
	if err != nil {
		return Begun{}, fmt.Errorf("passkey: reading the passkeys of %q: %w", user, err)
	}
	creation, data, err := s.wa.BeginRegistration(a, webauthn.WithExclusions(webauthn.Credentials(a.WebAuthnCredentials()).CredentialDescriptors()))
	if err != nil {
		return Begun{}, fmt.Errorf("passkey: beginning a registration: %w", err)
	}
	return s.begun(ctx, creation, ceremony{Kind: kindRegister, User: user, Data: *data, Stamp: stamp})
}

// FinishRegistration finishes the registration id for user with the
// browser's answer and stores the passkey under name, unless the user's
// factors changed since it began: then the error wraps ErrFactorsChanged.
func (s *Service) FinishRegistration(ctx context.Context, user, id, name string, answer []byte) (Verdict, error) {
	c, parsed, a, v, err := finishing(ctx, s, id, kindRegister, user, answer, protocol.ParseCredentialCreationResponseBytes,
		refused(ReasonNoCeremony, errors.New("the user handle is gone")))
	if err != nil || !v.OK {
		return v, err
	}
	cred, err := s.wa.CreateCredential(a, c.Data, parsed)
	if err != nil {
		return refused(ReasonRejected, err), nil
	}
	now := s.o.Now()
	if err := s.o.Keys.AddPasskey(ctx, user, Passkey{Name: name, Created: now, Credential: *cred}, c.Stamp); err != nil {
		return Verdict{}, fmt.Errorf("passkey: storing a passkey of %q: %w", user, err)
	}
	return Verdict{OK: true, User: user, Next: c.Next}, nil
}

// finishing is the first half of finishing a ceremony begun for a user:
// the ceremony id of kind is taken (spent), the browser's answer read by
// parse, and the user's account loaded; gone is the Verdict when the
// account is gone meanwhile. A Verdict that is not OK, or an error, ends
// the finish.
func finishing[P any](ctx context.Context, s *Service, id, kind, user string, answer []byte, parse func([]byte) (P, error), gone Verdict) (ceremony, P, *account, Verdict, error) {
	var parsed P
	c, v, err := s.take(ctx, id, kind, user)
	if err != nil || !v.OK {
		return c, parsed, nil, v, err
	}
	parsed, err = parse(answer)
	if err != nil {
		return c, parsed, nil, refused(ReasonRejected, err), nil
	}
	a, ok, err := s.load(ctx, user, false)
	if err != nil {
		return c, parsed, nil, Verdict{}, fmt.Errorf("passkey: reading the passkeys of %q: %w", user, err)
	}
	if !ok {
		return c, parsed, nil, gone, nil
	}
	return c, parsed, a, v, nil
}

// BeginLogin begins the second step of user's sign-in, after a right
// password; next is kept with the ceremony. A user without passkeys gets
// ErrNoPasskeys.
func (s *Service) BeginLogin(ctx context.Context, user, next string) (Begun, error) {
	a, ok, err := s.load(ctx, user, false)
	if err != nil {
		return Begun{}, fmt.Errorf("passkey: reading the passkeys of %q: %w", user, err)
	}
	if !ok || len(a.keys) == 0 {
		return Begun{}, ErrNoPasskeys
	}
	assertion, data, err := s.wa.BeginLogin(a)
	if err != nil {
		return Begun{}, fmt.Errorf("passkey: beginning a sign-in: %w", err)
	}
	return s.begun(ctx, assertion, ceremony{Kind: kindLogin, User: user, Next: next, Data: *data})
}

// FinishLogin finishes the sign-in id of user with the browser's answer.
func (s *Service) FinishLogin(ctx context.Context, user, id string, answer []byte) (Verdict, error) {
	c, parsed, a, v, err := finishing(ctx, s, id, kindLogin, user, answer, protocol.ParseCredentialRequestResponseBytes,
		refused(ReasonUnknown, errors.New("the user has no passkeys any more")))
	if err != nil || !v.OK {
		return v, err
	}
	cred, err := s.wa.ValidateLogin(a, c.Data, parsed)
	return s.used(ctx, a, c, cred, err)
}

// BeginDiscoverable begins a passkey-only sign-in: the browser offers the
// passkeys it holds for this site, and the one chosen names its user.
// User verification (a PIN, a fingerprint) is required, since the passkey
// is then the only factor.
func (s *Service) BeginDiscoverable(ctx context.Context, next string) (Begun, error) {
	assertion, data, err := s.wa.BeginDiscoverableLogin(webauthn.WithUserVerification(protocol.VerificationRequired))
	if err != nil {
		return Begun{}, fmt.Errorf("passkey: beginning a sign-in: %w", err)
	}
	return s.begun(ctx, assertion, ceremony{Kind: kindDiscover, Next: next, Data: *data})
}

// FinishDiscoverable finishes the passkey-only sign-in id; the Verdict
// names the user.
func (s *Service) FinishDiscoverable(ctx context.Context, id string, answer []byte) (Verdict, error) {
	c, v, err := s.take(ctx, id, kindDiscover, "")
	if err != nil || !v.OK {
		return v, err
	}
	parsed, err := protocol.ParseCredentialRequestResponseBytes(answer)
	if err != nil {
		return refused(ReasonRejected, err), nil
	}
	var storeErr error
	var found *account
	lookup := func(rawID, handle []byte) (webauthn.User, error) {
		user, ok, err := s.o.Keys.Owner(ctx, handle)
		if err == nil && ok {
			found, ok, err = s.load(ctx, user, false)
		}
		if err != nil {
			storeErr = err
			return nil, err
		}
		if !ok {
			return nil, errors.New("no user has this user handle")
		}
		return found, nil
	}
	_, cred, err := s.wa.ValidatePasskeyLogin(lookup, c.Data, parsed)
	if storeErr != nil {
		return Verdict{}, fmt.Errorf("passkey: finding the owner of a passkey: %w", storeErr)
	}
	if found == nil {
		return refused(ReasonUnknown, err), nil
	}
	return s.used(ctx, found, c, cred, err)
}

// used turns go-webauthn's answer to an assertion into a Verdict,
// recording the use (sign count, last use) of an accepted one.
func (s *Service) used(ctx context.Context, a *account, c ceremony, cred *webauthn.Credential, err error) (Verdict, error) {
	if err != nil {
		v := refused(ReasonRejected, err)
		var unknown *protocol.ErrorUnknownCredential
		if errors.As(err, &unknown) {
			v.Reason = ReasonUnknown
		}
		v.User = a.name // for the log: whose passkey was refused
		return v, nil
	}
	if cred.Authenticator.CloneWarning {
		v := refused(ReasonCloned, fmt.Errorf("%s: sign count %d, stored %d", credentialName(a, cred.ID), cred.Authenticator.SignCount, storedCount(a, cred.ID)))
		v.Cloned, v.User = true, a.name
		return v, nil
	}
	if err := s.o.Keys.UsePasskey(ctx, a.name, *cred, s.o.Now()); errors.Is(err, userstate.ErrCountNotAbove) {
		// Another assertion with this count or a higher one was accepted
		// meanwhile (a clone, or a replay): the store compared them.
		v := refused(ReasonCloned, fmt.Errorf("%s: %w", credentialName(a, cred.ID), err))
		v.Cloned, v.User = true, a.name
		return v, nil
	} else if err != nil {
		return Verdict{}, fmt.Errorf("passkey: recording the use of a passkey of %q: %w", a.name, err)
	}
	return Verdict{OK: true, User: a.name, Next: c.Next}, nil
}

// credentialName names a credential of a for a log line: the passkey's
// name and its credential id (public; never a key).
func credentialName(a *account, id []byte) string {
	name := ""
	if i := slices.IndexFunc(a.keys, func(k Passkey) bool { return bytes.Equal(k.Credential.ID, id) }); i >= 0 {
		name = a.keys[i].Name
	}
	return fmt.Sprintf("passkey %q (credential %s)", name, base64.RawURLEncoding.EncodeToString(id))
}

// storedCount is the sign count stored for the credential id.
func storedCount(a *account, id []byte) uint32 {
	i := slices.IndexFunc(a.keys, func(k Passkey) bool { return bytes.Equal(k.Credential.ID, id) })
	if i < 0 {
		return 0
	}
	return a.keys[i].Credential.Authenticator.SignCount
}

// begun keeps c and returns the options and the ceremony's id.
func (s *Service) begun(ctx context.Context, options any, c ceremony) (Begun, error) {
	body, err := json.Marshal(options)
	if err != nil {
		return Begun{}, fmt.Errorf("passkey: encoding the options: %w", err)
	}
	id, err := s.o.Ceremonies.put(ctx, c)
	if err != nil {
		return Begun{}, err
	}
	return Begun{Options: body, ID: id}, nil
}

// take ends the ceremony id, which must be of kind and begun for user.
func (s *Service) take(ctx context.Context, id, kind, user string) (ceremony, Verdict, error) {
	c, ok, err := s.o.Ceremonies.take(ctx, id)
	if err != nil {
		return ceremony{}, Verdict{}, err
	}
	if !ok || c.Kind != kind || c.User != user {
		return ceremony{}, refused(ReasonNoCeremony, nil), nil
	}
	return c, Verdict{OK: true}, nil
}

// refused is a Verdict saying no, for reason, with err's text as detail.
func refused(reason string, err error) Verdict {
	v := Verdict{Reason: reason}
	if err != nil {
		v.Detail = err.Error()
		var pe *protocol.Error
		if errors.As(err, &pe) && pe.DevInfo != "" {
			v.Detail += ": " + pe.DevInfo
		}
	}
	return v
}
