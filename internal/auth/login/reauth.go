package login

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/auth/sessionauth"
	"github.com/backupweb/backupweb/internal/refusal"
	"github.com/backupweb/backupweb/internal/session"
	"github.com/backupweb/backupweb/internal/ui"
)

// ReauthPath is the page where a signed-in user gives their password
// again: GET shows the form, POST checks it. ReauthWindow is how long
// that confirmation lasts: a step that needs it (adding or removing a
// second factor) is allowed while the password was given within it.
const (
	ReauthPath   = "/_backupweb/reauth"
	ReauthWindow = 5 * time.Minute
)

// AttrReauth is the session attribute that records when the password was
// last given in the session: Unix seconds. A sign-in with the password
// sets it to when the password was checked (with a second factor, at the
// password step, not at the code), since that is the password given;
// ReauthPath sets it again. A passkey-only sign-in does not.
const AttrReauth = "reauth"

// msgReauthTitle is the heading of the page.
const msgReauthTitle = "Confirm your password"

// RecentPassword reports whether u, signed in with a session, gave their
// password again within ReauthWindow (see ReauthPath).
func (p *Provider) RecentPassword(u auth.User) bool {
	sec, err := strconv.ParseInt(u.Attrs.Get(AttrReauth), 10, 64)
	if err != nil {
		return false
	}
	age := p.now().Sub(time.Unix(sec, 0))
	return age >= -time.Minute && age < ReauthWindow
}

// RequirePassword is the gate of a step that needs the password given
// again: it reports whether u did (RecentPassword). When not, it answers:
// a browser's request for a page or a form (Accept names text/html) is
// sent (303) to ReauthPath, which comes back to back, a local path;
// another client gets 403 refusal.PasswordAgain (JSON when it asks for it).
// Check the request's CSRF token first, so that another site cannot even
// start the detour.
func (p *Provider) RequirePassword(w http.ResponseWriter, r *http.Request, u auth.User, back string) bool {
	if p.RecentPassword(u) {
		return true
	}
	if refusal.Accepts(r, "text/html") && !p.errs.WantsJSON(r) {
		w.Header().Set("Cache-Control", "no-store")
		sessionauth.SeeOther(w, ReauthURL(p.Guard.SafeNext(back)))
		return false
	}
	p.errs.Refuse(w, r, refusal.PasswordAgain)
	return false
}

// ReauthURL returns the address of the password page that comes back to
// next.
func ReauthURL(next string) string { return withNext(ReauthPath, next) }

// serveReauth is GET ReauthPath: the password form for the signed-in
// user (the login page for anyone else).
func (p *Provider) serveReauth(w http.ResponseWriter, r *http.Request) {
	u, s, ok := p.signedIn(w, r, nil)
	if !ok {
		return
	}
	next := p.Guard.SafeNext(r.URL.Query().Get("next"))
	p.renderReauth(w, r, refusal.Reply{Status: http.StatusOK}, u.Name, p.Manager().CSRFToken(s), next)
}

// serveReauthPost is POST ReauthPath. In order: the form (400, 413), the
// session and its CSRF token (401, 403), an empty password (401), the
// limits of the client address and of the user name or device, as for a
// sign-in (429), the password (401, counted as a failure); then the
// session moves to a new id (session.Manager.Restart, its lifetime
// unchanged) with AttrReauth set to now, and the browser goes to next.
func (p *Provider) serveReauthPost(w http.ResponseWriter, r *http.Request) {
	if !p.parseForm(w, r) {
		return
	}
	token := r.PostForm.Get("csrf_token")
	u, s, ok := p.signedIn(w, r, &token)
	if !ok {
		return
	}
	next := p.Guard.SafeNext(r.PostForm.Get("next"))
	pw := r.PostForm.Get("password")
	if pw == "" {
		p.audit.Refused(r, Name, auth.ReasonMalformed, u.Name)
		p.renderReauth(w, r, refusal.WrongPassword.Reply(), u.Name, token, next)
		return
	}
	limits := p.limitsFor(r, u.Name)
	_, ok, err := countAttempt(p, r, limits, u.Name, func(ctx context.Context) (bool, bool, error) {
		v, ok, err := p.check(ctx, u.Name, pw)
		// The password is right for this very user: the directory's
		// spelling of the name is the session's.
		return ok, ok && v.name == u.Name, err
	})
	if err != nil {
		if rp, ok := p.replyTo(w, r, err, "auth: checking a password given again failed with an error"); ok {
			p.renderReauth(w, r, rp, u.Name, token, next)
		}
		return
	}
	if !ok {
		p.audit.Refused(r, Name, auth.ReasonBadCredentials, u.Name)
		p.renderReauth(w, r, refusal.WrongPassword.Reply(), u.Name, token, next)
		return
	}
	p.forgetFailures(r, limits)
	d := session.Data{Username: s.Username, Cred: s.Cred, Attrs: s.Attrs.With(AttrReauth, strconv.FormatInt(p.now().Unix(), 10))}
	if _, err := p.Manager().Restart(w, r, s, d); err != nil {
		p.errs.Error(w, r, fmt.Errorf("login: recording the password given again: %w", err))
		return
	}
	p.log.InfoContext(r.Context(), "auth: password given again", "auth_type", Name, "user", u.Name)
	sessionauth.SeeOther(w, next)
}

// renderReauth writes the password page with the refusal rp (JSON for a
// client that asks for it). Its Cancel link goes to the catalog: next
// itself would ask for the password again.
func (p *Provider) renderReauth(w http.ResponseWriter, r *http.Request, rp refusal.Reply, user, token, next string) {
	if rp.Status >= http.StatusBadRequest && p.errs.WantsJSON(r) {
		p.errs.Send(w, r, rp)
		return
	}
	page := ui.ReauthPage{StepForm: ui.StepForm{
		Brand: ui.BrandOf(r.Context()), Title: msgReauthTitle, Action: ReauthPath,
		CSRFToken: token, Next: next, User: user, Error: rp.Message, StartOver: "/",
	}}
	p.renderStep(w, r, rp.Status, "reauth", "the password page", "", page)
}
