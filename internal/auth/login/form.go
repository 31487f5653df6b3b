package login

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/backupweb/backupweb/internal/attrs"
	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/auth/passwordauth"
	"github.com/backupweb/backupweb/internal/auth/sessionauth"
	"github.com/backupweb/backupweb/internal/password"
	"github.com/backupweb/backupweb/internal/peer"
	"github.com/backupweb/backupweb/internal/refusal"
	"github.com/backupweb/backupweb/internal/session"
	"github.com/backupweb/backupweb/internal/throttle"
	"github.com/backupweb/backupweb/internal/ui"
	"github.com/backupweb/backupweb/internal/userfile"
)

// MsgSignedOut is the notice of the login page after a logout. Its
// refusals are rows of the catalogue (refusal.BadCredentials, the one answer
// to a wrong password and to an unknown user name alike;
// refusal.EmptyCredentials; refusal.FormExpired).
const MsgSignedOut = "You have been signed out."

// Titles of the built-in login page: pageTitle, and signedOutTitle after
// a sign-out.
const (
	pageTitle      = "Sign in"
	signedOutTitle = "Sign in again"
)

// maxFormBytes bounds a login form: a user name, a password of bcrypt's 72
// bytes, two tokens and a next path fit many times over.
const maxFormBytes = 64 << 10

// serveForm is GET on the login path: the form, or for a browser that is
// signed in already, a 303 to next.
func (p *Provider) serveForm(w http.ResponseWriter, r *http.Request) {
	next := p.Guard.SafeNext(r.URL.Query().Get("next"))
	if _, ok, err := p.Guard.Identify(r); err == nil && ok {
		sessionauth.SeeOther(w, next)
		return
	}
	if r.URL.Query().Has("signed_out") {
		p.renderPage(w, r, http.StatusOK, ui.LoginPage{Title: signedOutTitle, Next: next, Notice: MsgSignedOut})
		return
	}
	p.renderPage(w, r, http.StatusOK, ui.LoginPage{Next: next})
}

// serveLogin is POST on the login path. In order: the form's CSRF token
// (403), empty fields (401), the failure limits of the client address and
// of the user name, or of the device when the browser carries a device
// cookie for that name (429), the password (401, one message for an
// unknown name and a wrong password); then the session starts with a
// fresh id, the browser gets a fresh device cookie, and is sent to next.
// Refusals are JSON for a client that asks for it (refusal.Errors.WantsJSON).
func (p *Provider) serveLogin(w http.ResponseWriter, r *http.Request) {
	if !p.parseForm(w, r) {
		return
	}
	name, pw := r.PostForm.Get("username"), r.PostForm.Get("password")
	next := p.Guard.SafeNext(r.PostForm.Get("next"))
	logged := userfile.LogName(name)
	if !p.Manager().CheckFormToken(r, r.PostForm.Get("csrf_token")) {
		// Refused before anything is counted: a forged form costs nothing
		// and proves nothing.
		p.audit.Refused(r, Name, auth.ReasonBadCSRF, logged)
		p.render(w, r, refusal.FormExpired.Reply(), name, next)
		return
	}
	if name == "" || pw == "" {
		p.audit.Refused(r, Name, auth.ReasonMalformed, logged)
		p.render(w, r, refusal.EmptyCredentials.Reply(), name, next)
		return
	}
	// The address's limit, and the name's, or instead the device's when
	// the browser carries a device cookie signed for this name.
	limits := p.limitsFor(r, name)
	v, ok, err := countAttempt(p, r, limits, logged, func(ctx context.Context) (verdict, bool, error) {
		return p.check(ctx, name, pw)
	})
	if err != nil {
		p.renderError(w, r, err, name, next)
		return
	}
	if !ok {
		reason := auth.ReasonBadCredentials
		if p.cfg.UseBcrypt && len(pw) > password.MaxLen {
			reason = auth.ReasonTooLong
		}
		p.audit.Refused(r, Name, reason, logged)
		p.render(w, r, refusal.BadCredentials.Reply(), name, next)
		return
	}
	// A user with a second factor (or any user, when one is required)
	// is not signed in yet: the pending state begins, and the name's
	// failures stand until the second factor is right.
	// From here on the user is named as the source spells the name.
	name, cred := v.name, v.cred
	if p.step.AfterPassword(w, r, name, cred, v.groups, v.email, next) {
		return
	}
	// A success forgets the failures of its own name (or device) only:
	// the address's count stands, so signing in between guesses at other
	// names earns nothing. A failure to forget leaves them counted, which
	// errs on the safe side.
	p.forgetFailures(r, limits)
	// cred is the fingerprint of the very value the password was checked
	// against: if the user file changed during the check, the session is
	// refused at its first request.
	// The password just given counts as given again for the steps that
	// ask for it (secondfactor.Step.RequirePassword) for
	// secondfactor.ReauthWindow.
	facts := map[string]string{AttrReauth: strconv.FormatInt(p.now().Unix(), 10)}
	if !p.factorsOn() {
		facts[AttrStepSkipped] = "1"
	}
	if p.dir != nil {
		directoryAttrs(facts, v.groups, v.email)
	}
	d := session.Data{Username: name, Cred: cred, Attrs: attrs.Of(facts)}
	if err := p.Guard.Begin(w, r, d); err != nil {
		p.errs.Error(w, r, fmt.Errorf("starting the session: %w", err))
		return
	}
	p.issueDevice(w, r, name)
	p.audit.SignedIn(r, Name, name)
	sessionauth.SeeOther(w, next)
}

// limit is one throttling limit a login attempt is counted against: a
// counter, the key in it, and how the key is named in logs.
type limit struct {
	c          throttle.Counter
	key, label string
}

// addrLimit returns the client address's limit (an IPv6 client counts
// per /64).
func (p *Provider) addrLimit(r *http.Request) limit {
	return limit{p.byAddr, throttle.AddrKey(peer.Of(r).Addr), peer.Of(r).String()}
}

// limitsFor returns the limits an attempt of the user name counts
// against, a password's or a second factor's: the client address's, and
// the name's or, for a browser with a device cookie for that name, the
// device's. Logs name the user as logName bounds it.
func (p *Provider) limitsFor(r *http.Request, name string) []limit {
	name = p.throttleName(name)
	limits := []limit{p.addrLimit(r)}
	if dev, ok := p.device(r, name); ok {
		return append(limits, limit{p.byDevice, dev, "device of user " + userfile.LogName(name)})
	}
	return append(limits, limit{p.byUser, name, "user " + userfile.LogName(name)})
}

// parseForm reads a posted form of bounded size, answering 413 or 400
// when it cannot. It reports whether the form was read.
func (p *Provider) parseForm(w http.ResponseWriter, r *http.Request) bool {
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	if err := r.ParseForm(); err != nil {
		w.Header().Set("Cache-Control", "no-store")
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			p.errs.Refuse(w, r, refusal.FormTooLarge)
			return false
		}
		p.errs.Refuse(w, r, refusal.BadForm)
		return false
	}
	return true
}

// acquire takes a slot of each limit for the attempt, in order, after
// checking that none is blocked (so that a blocked address has nothing
// counted for the names it tries). Each slot may wait a bounded time when
// others in flight hold them all (see package throttle). Ends of blocks
// are logged here, once each. On any refusal the slots taken are given
// back and the error says why: a *refusal.RetryError (429), or a store that
// did not answer, in which case the attempt must not be checked.
func (p *Provider) acquire(r *http.Request, limits []limit, logged string) ([]throttle.Slot, error) {
	ctx := r.Context()
	for _, l := range limits {
		v, err := l.c.Check(ctx, l.key)
		if err != nil {
			return nil, fmt.Errorf("login: counting the attempt: %w", err)
		}
		if err := passwordauth.Admit(p.audit, r, Name, v, l.label, logged); err != nil {
			return nil, err
		}
	}
	slots := make([]throttle.Slot, 0, len(limits))
	for i, l := range limits {
		v, err := l.c.Acquire(ctx, l.key)
		if err != nil {
			err = fmt.Errorf("login: counting the attempt: %w", err)
		} else {
			err = passwordauth.Admit(p.audit, r, Name, v, l.label, logged)
		}
		if err != nil {
			p.settle(r, limits[:i], slots, false)
			return nil, err
		}
		slots = append(slots, v.Slot)
	}
	return slots, nil
}

// countAttempt runs check as one attempt counted against limits (logged
// names its user in the log): a slot of each limit is acquired, check
// runs within throttle.MaxCheck, and the slots are settled: as failures
// when check says no, given back when it says yes or gives no verdict (an
// error, a panic). An error is acquire's refusal or check's.
func countAttempt[T any](p *Provider, r *http.Request, limits []limit, logged string, check func(context.Context) (T, bool, error)) (T, bool, error) {
	slots, err := p.acquire(r, limits, logged)
	if err != nil {
		var zero T
		return zero, false, err
	}
	settled := false
	defer func() {
		if !settled { // no verdict (an error, a panic): the slots go back
			p.settle(r, limits, slots, false)
		}
	}()
	ctx, cancel := context.WithTimeout(r.Context(), throttle.MaxCheck)
	defer cancel()
	v, ok, err := check(ctx)
	if err != nil {
		return v, false, err
	}
	settled = true
	p.settle(r, limits, slots, !ok)
	return v, ok, nil
}

// forgetFailures forgets the failures of the last of limits, the name's
// or the device's, after a good sign-in. A failure to forget leaves them
// counted, which errs on the safe side, and is logged.
func (p *Provider) forgetFailures(r *http.Request, limits []limit) {
	last := limits[len(limits)-1]
	if err := last.c.Reset(context.WithoutCancel(r.Context()), last.key); err != nil {
		p.log.WarnContext(r.Context(), "auth: forgetting the failures of a good login failed", "auth_type", Name, "err", err)
	}
}

// settle ends the attempt's slots: recorded as failures when failed, else
// given back. Failing to is logged: a slot not given back stays taken
// until its lease runs out (a shared store), which errs on the safe side.
func (p *Provider) settle(r *http.Request, limits []limit, slots []throttle.Slot, failed bool) {
	ctx := context.WithoutCancel(r.Context())
	for i, s := range slots {
		var err error
		if failed {
			_, err = limits[i].c.Fail(ctx, s)
		} else {
			err = limits[i].c.Release(ctx, s)
		}
		if err != nil {
			p.log.WarnContext(r.Context(), "auth: settling an attempt slot failed", "auth_type", Name, "failed", failed, "err", err)
		}
	}
}

// check verifies name and pw against the current users and returns the
// fingerprint of the credential it checked against. An unknown name
// costs the same work as a wrong password: in bcrypt mode a check against
// a decoy hash of the users' usual cost, in plain mode a constant-time
// comparison against nothing.
//
// With users = ldap the directory is asked instead (checkDirectory), and
// the verdict carries the directory's spelling of the name and the
// user's groups.
func (p *Provider) check(ctx context.Context, name, pw string) (v verdict, ok bool, err error) {
	if p.dir != nil {
		return p.checkDirectory(ctx, name, pw)
	}
	set := p.users.Load()
	stored, known := set.hashes[name]
	switch {
	case known:
		ok, err = p.match.Match(ctx, stored, []byte(pw))
		return verdict{name: name, cred: set.creds[name]}, ok, err
	default:
		return verdict{}, false, p.match.Decoy(ctx, set.decoyCost, []byte(pw))
	}
}

// renderError shows the form with the status, sentence and Retry-After
// of refusal.ReplyTo(err): the one table every error is answered by. An
// abandoned request gets nothing; unexpected errors are logged.
func (p *Provider) renderError(w http.ResponseWriter, r *http.Request, err error, name, next string) {
	if rp, ok := p.replyTo(w, r, err, "auth: login failed with an error"); ok {
		p.render(w, r, rp, name, next)
	}
}

// replyTo is refusal.ReplyTo(err) for a page of the provider's own: it sets
// Retry-After and logs an unexpected error with msg. ok is false for an
// abandoned request, which gets nothing.
func (p *Provider) replyTo(w http.ResponseWriter, r *http.Request, err error, msg string) (rp refusal.Reply, ok bool) {
	if r.Context().Err() != nil {
		return refusal.Reply{}, false
	}
	rp = refusal.ReplyTo(err)
	rp.SetRetryAfter(w.Header())
	if rp.Unexpected {
		p.log.ErrorContext(r.Context(), msg, "auth_type", Name, "err", err)
	}
	return rp, true
}

// render writes the login page with the refusal rp: the configured
// template or the built-in one, with a CSRF token bound to the browser's
// form cookie (set now if missing). The user name typed is shown again
// when it could be a user name at all.
func (p *Provider) render(w http.ResponseWriter, r *http.Request, rp refusal.Reply, name, next string) {
	if p.errs.WantsJSON(r) {
		// The one refusal rule: a client that asks for JSON gets it here
		// as on every other route; the form is for browsers.
		p.errs.Send(w, r, rp)
		return
	}
	if userfile.ValidName(name) != nil {
		name = ""
	}
	p.renderPage(w, r, rp.Status, ui.LoginPage{Next: next, Error: rp.Message, Username: name})
}

// renderPage shows the login page with page's Next, Error, Notice and
// Username (and Title, when set), filling in the title, the brand, the
// form's action and a fresh CSRF token.
func (p *Provider) renderPage(w http.ResponseWriter, r *http.Request, status int, page ui.LoginPage) {
	if page.Next == "/" {
		page.Next = ""
	}
	page.Title = cmp.Or(page.Title, pageTitle)
	page.Brand, page.Action, page.CSRFToken = ui.BrandOf(r.Context()), p.cfg.LoginPath, p.Manager().FormToken(w, r)
	w.Header().Set("Cache-Control", "no-store")
	if page.Passkey = p.step.LoginButton(page.Next); page.Passkey.BeginURL != "" {
		page.Passkey.CSRFToken = page.CSRFToken
		ui.AllowScript(w.Header())
	}
	var err error
	if p.tmpl != nil {
		err = ui.RenderWith(w, status, p.tmpl, page)
	} else {
		err = ui.Render(w, status, "login", page)
	}
	if err != nil {
		p.log.ErrorContext(r.Context(), "auth: rendering the login page", "auth_type", Name, "err", err)
	}
}
