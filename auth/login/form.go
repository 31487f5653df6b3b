package login

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/backupweb/backupweb/auth"
	"github.com/backupweb/backupweb/password"
	"github.com/backupweb/backupweb/peer"
	"github.com/backupweb/backupweb/session"
	"github.com/backupweb/backupweb/throttle"
	"github.com/backupweb/backupweb/ui"
	"github.com/backupweb/backupweb/userfile"
)

// Messages of the login page. MsgBadCredentials is the one answer to a
// wrong password and to an unknown user name alike.
const (
	MsgBadCredentials = "Wrong user name or password."
	MsgEmpty          = "Enter your user name and password."
	MsgBadCSRF        = "The sign-in form has expired. Please sign in again."
	msgBadForm        = "The sign-in form could not be read."
	MsgSignedOut      = "You have been signed out."
)

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
		redirectLocal(w, next)
		return
	}
	if r.URL.Query().Has("signed_out") {
		p.renderPage(w, r, http.StatusOK, ui.LoginPage{Title: signedOutTitle, Next: next, Notice: MsgSignedOut})
		return
	}
	p.render(w, r, http.StatusOK, "", next, "")
}

// serveLogin is POST on the login path. In order: the form's CSRF token
// (403), the failure limits of the client address and of the user name
// (429), empty fields (401), the password (401, one message for an unknown
// name and a wrong password); then the session starts with a fresh id and
// the browser is sent to next.
func (p *Provider) serveLogin(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	if err := r.ParseForm(); err != nil {
		w.Header().Set("Cache-Control", "no-store")
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			p.errs.Refuse(w, r, http.StatusRequestEntityTooLarge, "The form is too large.")
			return
		}
		p.errs.Refuse(w, r, http.StatusBadRequest, msgBadForm)
		return
	}
	name, pw := r.PostForm.Get("username"), r.PostForm.Get("password")
	next := p.Guard.SafeNext(r.PostForm.Get("next"))
	logged := logName(name)
	if !p.Manager().CheckFormToken(r, r.PostForm.Get("csrf_token")) {
		auth.LogRefused(p.log, r, Name, auth.ReasonBadCSRF, logged)
		p.render(w, r, http.StatusForbidden, name, next, MsgBadCSRF)
		return
	}
	if name == "" || pw == "" {
		auth.LogRefused(p.log, r, Name, auth.ReasonMalformed, logged)
		p.render(w, r, http.StatusUnauthorized, name, next, MsgEmpty)
		return
	}
	client, userKey := peer.Of(r).String(), name
	// Counted as failures before the check (see throttle.Reserve), taken
	// back on success.
	byAddr, byUser, wait, limited, err := p.reserve(r, client, userKey)
	if err != nil {
		p.renderError(w, r, err, name, next)
		return
	}
	if limited {
		auth.CountThrottled(r, Name)
		if byAddr.FirstRefusal || byUser.FirstRefusal {
			auth.LogRefused(p.log, r, Name, auth.ReasonThrottled, logged)
		}
		p.renderError(w, r, &auth.RetryError{After: wait}, name, next)
		return
	}
	cred, ok, err := p.check(r.Context(), name, pw)
	if err != nil {
		p.release(r, byAddr, byUser)
		p.renderError(w, r, err, name, next)
		return
	}
	if !ok {
		reason := auth.ReasonBadCredentials
		if p.cfg.UseBcrypt && len(pw) > password.MaxLen {
			reason = auth.ReasonTooLong
		}
		auth.LogRefused(p.log, r, Name, reason, logged)
		p.render(w, r, http.StatusUnauthorized, name, next, MsgBadCredentials)
		return
	}
	// Forgets the reservations with the rest; a failure to only leaves
	// them counted, which errs on the safe side.
	if err := errors.Join(p.byAddr.Reset(r.Context(), throttle.AddrKey(peer.Of(r).Addr)), p.byUser.Reset(r.Context(), userKey)); err != nil {
		p.log.WarnContext(r.Context(), "auth: forgetting the failures of a good login failed", "auth_type", Name, "err", err)
	}
	// cred is the fingerprint of the very value the password was checked
	// against: if the user file changed during the check, the session is
	// refused at its first request.
	if err := p.Guard.Begin(w, r, session.Data{Username: name, Cred: cred}); err != nil {
		p.errs.Error(w, r, fmt.Errorf("starting the session: %w", err))
		return
	}
	auth.LogSignedIn(p.log, r, Name, name)
	redirectLocal(w, next)
}

// reserve counts the attempt against the client address and the user name
// before the password is checked (see throttle.Limiter.Reserve). When
// either has used up its failures, limited is true, wait says for how
// long, and whatever was reserved is taken back: a refused attempt is not
// a verdict. Ends of blocks are logged here, once each. An error means
// the attempt could not be counted, and must not be checked.
func (p *Provider) reserve(r *http.Request, client, userKey string) (byAddr, byUser throttle.Verdict, wait time.Duration, limited bool, err error) {
	ctx := r.Context()
	byAddr, err = p.byAddr.Reserve(ctx, throttle.AddrKey(peer.Of(r).Addr)) // an IPv6 client counts per /64
	if err != nil {
		return byAddr, byUser, 0, false, fmt.Errorf("login: counting the attempt: %w", err)
	}
	if byAddr.BlockEnded > 0 {
		auth.LogBlockEnded(p.log, r, Name, client, byAddr.BlockEnded)
	}
	if !byAddr.OK {
		// The name is not counted (nor remembered) for a client that is
		// already held off: a blocked address cannot fill the table of
		// user names.
		return byAddr, throttle.Verdict{}, byAddr.RetryAfter, true, nil
	}
	byUser, err = p.byUser.Reserve(ctx, userKey)
	if err != nil {
		p.release(r, byAddr, throttle.Verdict{})
		return byAddr, byUser, 0, false, fmt.Errorf("login: counting the attempt: %w", err)
	}
	if byUser.BlockEnded > 0 {
		auth.LogBlockEnded(p.log, r, Name, "user "+logName(userKey), byUser.BlockEnded)
	}
	if byAddr.OK && byUser.OK {
		return byAddr, byUser, 0, false, nil
	}
	p.release(r, byAddr, byUser)
	return byAddr, byUser, max(byAddr.RetryAfter, byUser.RetryAfter), true, nil
}

// release takes back the attempts of the two verdicts. Failing to is
// logged: the attempt then counts as a failure, which errs on the safe
// side.
func (p *Provider) release(r *http.Request, byAddr, byUser throttle.Verdict) {
	if err := errors.Join(p.byAddr.Release(r.Context(), byAddr), p.byUser.Release(r.Context(), byUser)); err != nil {
		p.log.WarnContext(r.Context(), "auth: taking back a counted attempt failed", "auth_type", Name, "err", err)
	}
}

// check verifies name and pw against the current users and returns the
// fingerprint of the credential it checked against. An unknown name
// costs the same work as a wrong password: in bcrypt mode a check against
// a decoy hash of the users' usual cost, in plain mode a constant-time
// comparison against nothing.
func (p *Provider) check(ctx context.Context, name, pw string) (cred string, ok bool, err error) {
	set := p.users.Load()
	stored, known := set.hashes[name]
	switch {
	case known:
		ok, err = p.match.Match(ctx, stored, []byte(pw))
		return set.creds[name], ok, err
	default:
		return "", false, p.match.Decoy(ctx, set.decoyCost, []byte(pw))
	}
}

// renderError shows the form with the status, sentence and Retry-After
// of auth.ReplyTo(err): the one table every error is answered by. An
// abandoned request gets nothing; unexpected errors are logged.
func (p *Provider) renderError(w http.ResponseWriter, r *http.Request, err error, name, next string) {
	if r.Context().Err() != nil {
		return
	}
	rp := auth.ReplyTo(err)
	rp.SetRetryAfter(w.Header())
	if rp.Unexpected {
		p.log.ErrorContext(r.Context(), "auth: login failed with an error", "auth_type", Name, "err", err)
	}
	p.render(w, r, rp.Status, name, next, rp.Message)
}

// render writes the login page: the configured template or the built-in
// one, with a CSRF token bound to the browser's form cookie (set now if
// missing). The user name typed is shown again when it could be a user
// name at all.
func (p *Provider) render(w http.ResponseWriter, r *http.Request, status int, name, next, msg string) {
	if userfile.ValidName(name) != nil {
		name = ""
	}
	p.renderPage(w, r, status, ui.LoginPage{Next: next, Error: msg, Username: name})
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

// redirectLocal answers 303 to loc, a path sessionauth.SafeNext accepted.
// It sets Location itself rather than with http.Redirect, which cleans
// the path and could turn an accepted "/./\host" into "/\host", which
// browsers read as another host. Bytes outside printable ASCII are
// percent-encoded.
func redirectLocal(w http.ResponseWriter, loc string) {
	var b strings.Builder
	for i := 0; i < len(loc); i++ {
		if c := loc[i]; c <= ' ' || c >= 0x7f {
			fmt.Fprintf(&b, "%%%02X", c)
		} else {
			b.WriteByte(c)
		}
	}
	w.Header().Set("Location", b.String())
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusSeeOther)
}

// logName bounds a user name for logs: whatever was typed, at most
// userfile.MaxNameLen bytes of it, cut at a character boundary. Longer
// names are never users.
func logName(name string) string {
	if len(name) <= userfile.MaxNameLen {
		return name
	}
	cut := userfile.MaxNameLen
	for cut > 0 && !utf8.RuneStart(name[cut]) {
		cut--
	}
	return name[:cut]
}
