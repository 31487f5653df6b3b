package login

import (
	"context"
	"net/http"

	"github.com/backupweb/backupweb/internal/auth/passwordauth"
	"github.com/backupweb/backupweb/internal/auth/secondfactor"
	"github.com/backupweb/backupweb/internal/auth/sessionauth"
	"github.com/backupweb/backupweb/internal/factors"
	"github.com/backupweb/backupweb/internal/refusal"
	"github.com/backupweb/backupweb/internal/session"
	"github.com/backupweb/backupweb/internal/userstate"
)

// The session attributes of the second factor (package secondfactor):
// the factor that completed the sign-in, a session made with the password
// alone while second_factor was off, and when the password was last
// given.
const (
	AttrSecondFactor = secondfactor.AttrSecondFactor
	AttrStepSkipped  = secondfactor.AttrStepSkipped
	AttrReauth       = secondfactor.AttrReauth
)

// Factors returns the factors file's store, made whatever
// second_factor says (a reload may turn it on); nil when the factors are
// kept in a shared store.
func (p *Provider) Factors() *factors.Store {
	if p.files == nil {
		return nil
	}
	return p.files.FactorsFile()
}

// factorAdmits reports whether a session still stands with the user's
// factors as they are now: never for a user whose record is broken or
// cannot be read; with required, only for a session made with a second
// factor of a user who still has one; a session made with a second
// factor ends when the user's factors are reset; never for a session
// that skipped the step while it was off (AttrStepSkipped) of a user who
// has a factor. With second_factor off, every session stands. It reads the user's
// status only (userstate.Store.Status, in memory or the shared store's
// client-side cache), never a factor record.
func (p *Provider) factorAdmits(d session.Data) bool {
	if !p.factorsOn() {
		return true
	}
	st, err := p.state.Status(context.Background(), d.Username)
	if err != nil {
		p.log.Error("auth: the store of second factors did not answer; the session is refused", "auth_type", Name, "user", d.Username, "err", err)
		return false
	}
	used := d.Attrs.Get(AttrSecondFactor) != ""
	switch {
	case st == factors.Broken:
		return false
	case !used && st == factors.Enrolled && d.Attrs.Get(AttrStepSkipped) != "":
		return false
	case p.secondFactor() == SecondFactorRequired:
		return used && st == factors.Enrolled
	default:
		return !used || st == factors.Enrolled
	}
}

// openStep makes the second-factor step (package secondfactor) of the
// provider, handed the provider's parts it needs.
func (p *Provider) openStep() (*secondfactor.Step, error) {
	h := stepHost{p}
	cfg := secondfactor.Config{
		Type: Name, Guard: p.Guard, Mode: p.secondFactor, PasskeyLogin: p.cfg.PasskeyLogin,
		State: p.state, Keys: p.fkeys, Where: p.stateWhere, Spend: p.spend, Spent: p.spent,
		Passkeys: p.passkeys,
		Users:    h, Attempts: h, Pages: h, Devices: h, Passwords: h,
		Errs: p.errs, Log: p.log, Audit: p.audit, Now: p.now,
	}
	if p.dir != nil {
		cfg.DirectoryAttrs = directoryAttrs
	}
	return secondfactor.New(cfg)
}

// signedInRoutes puts the gate of the routes of a signed-in user in front
// of mux (see bearerGate).
func (p *Provider) signedInRoutes(mux sessionauth.Routes) sessionauth.Routes {
	return bearerGate{mux, p}
}

// stepHost hands the second-factor step what stays with the provider:
// its users, failure limits, sign-in page, device cookie and password
// check.
type stepHost struct{ p *Provider }

var (
	_ secondfactor.Users     = stepHost{}
	_ secondfactor.Attempts  = stepHost{}
	_ secondfactor.Pages     = stepHost{}
	_ secondfactor.Devices   = stepHost{}
	_ secondfactor.Passwords = stepHost{}
)

// Admits reports whether cred is still user's credential fingerprint.
func (h stepHost) Admits(user, cred string) bool { return h.p.users.Load().admits(user, cred) }

// Cred returns user's credential fingerprint.
func (h stepHost) Cred(user string) (string, bool) { return h.p.users.Load().cred(user) }

// Vouch asks the directory, with users = ldap, whether a passkey's user
// may still sign in (not disabled) and gives their groups and e-mail; a
// user file's user is vouched for by Cred.
func (h stepHost) Vouch(ctx context.Context, user string) (map[string]string, bool, error) {
	if h.p.dir == nil {
		return nil, true, nil
	}
	e, ok, err := h.p.directoryUser(ctx, user, true)
	if err != nil || !ok {
		return nil, false, err
	}
	attrs := map[string]string{}
	directoryAttrs(attrs, e.Groups, e.Email)
	return attrs, true, nil
}

// Count runs check as one attempt of user counted against the limits of
// the address and of the name or device, or of the address alone when
// user is "".
func (h stepHost) Count(r *http.Request, user string, check func(context.Context) (bool, error)) (bool, error) {
	limits := []limit{h.p.addrLimit(r)}
	if user != "" {
		limits = h.p.limitsFor(r, user)
	}
	_, ok, err := countAttempt(h.p, r, limits, user, func(ctx context.Context) (struct{}, bool, error) {
		ok, err := check(ctx)
		return struct{}{}, ok, err
	})
	return ok, err
}

// Forget forgets the failures of user's name or device.
func (h stepHost) Forget(r *http.Request, user string) { h.p.forgetFailures(r, h.p.limitsFor(r, user)) }

// AdmitAddr returns the refusal of a client address blocked for its
// failures.
func (h stepHost) AdmitAddr(r *http.Request) error {
	addr := h.p.addrLimit(r)
	v, err := addr.c.Check(r.Context(), addr.key)
	if err != nil {
		return err
	}
	return passwordauth.Admit(h.p.audit, r, Name, v, addr.label, "")
}

// Login writes the sign-in page with rp.
func (h stepHost) Login(w http.ResponseWriter, r *http.Request, rp refusal.Reply, user, next string) {
	h.p.render(w, r, rp, user, next)
}

// ReplyTo answers err as the sign-in page does.
func (h stepHost) ReplyTo(w http.ResponseWriter, r *http.Request, err error, msg string) (refusal.Reply, bool) {
	return h.p.replyTo(w, r, err, msg)
}

// Issue sets a fresh device cookie for user.
func (h stepHost) Issue(w http.ResponseWriter, r *http.Request, user string) {
	h.p.issueDevice(w, r, user)
}

// Check reports whether pw is user's password, the directory spelling
// the name as the session does.
func (h stepHost) Check(ctx context.Context, user, pw string) (bool, error) {
	v, ok, err := h.p.check(ctx, user, pw)
	return ok && v.name == user, err
}

// Step returns the provider's second-factor step (package secondfactor).
func (p *Provider) Step() *secondfactor.Step { return p.step }

// UserState returns the store of the users' second factors and machine
// tokens the provider uses: the shared store's, or the files'.
func (p *Provider) UserState() userstate.Store { return p.state }
