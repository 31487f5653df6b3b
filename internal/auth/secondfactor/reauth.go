package secondfactor

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
func (s *Step) RecentPassword(u auth.User) bool {
	sec, err := strconv.ParseInt(u.Attrs.Get(AttrReauth), 10, 64)
	if err != nil {
		return false
	}
	age := s.cfg.Now().Sub(time.Unix(sec, 0))
	return age >= -time.Minute && age < ReauthWindow
}

// RequirePassword is the gate of a step that needs the password given
// again: it reports whether u did (RecentPassword). When not, it answers:
// a browser's request for a page or a form (Accept names text/html) is
// sent (303) to ReauthPath, which comes back to back, a local path;
// another client gets 403 refusal.PasswordAgain (JSON when it asks for it).
// Check the request's CSRF token first, so that another site cannot even
// start the detour.
func (s *Step) RequirePassword(w http.ResponseWriter, r *http.Request, u auth.User, back string) bool {
	if s.RecentPassword(u) {
		return true
	}
	if refusal.Accepts(r, "text/html") && !s.cfg.Errs.WantsJSON(r) {
		w.Header().Set("Cache-Control", "no-store")
		sessionauth.SeeOther(w, ReauthURL(s.cfg.Guard.SafeNext(back)))
		return false
	}
	s.cfg.Errs.Refuse(w, r, refusal.PasswordAgain)
	return false
}

// ReauthURL returns the address of the password page that comes back to
// next.
func ReauthURL(next string) string { return withNext(ReauthPath, next) }

// serveReauth is GET ReauthPath: the password form for the signed-in
// user (the login page for anyone else).
func (s *Step) serveReauth(w http.ResponseWriter, r *http.Request) {
	u, sess, ok := s.signedIn(w, r, nil)
	if !ok {
		return
	}
	next := s.cfg.Guard.SafeNext(r.URL.Query().Get("next"))
	s.renderReauth(w, r, refusal.Reply{Status: http.StatusOK}, u.Name, s.cfg.Guard.Manager().CSRFToken(sess), next)
}

// serveReauthPost is POST ReauthPath. In order: the form (400, 413), the
// session and its CSRF token (401, 403), an empty password (401), the
// limits of the client address and of the user name or device, as for a
// sign-in (429), the password (401, counted as a failure); then the
// session moves to a new id (session.Manager.Restart, its lifetime
// unchanged) with AttrReauth set to now, and the browser goes to next.
func (s *Step) serveReauthPost(w http.ResponseWriter, r *http.Request) {
	if !s.parseForm(w, r) {
		return
	}
	token := r.PostForm.Get("csrf_token")
	u, sess, ok := s.signedIn(w, r, &token)
	if !ok {
		return
	}
	next := s.cfg.Guard.SafeNext(r.PostForm.Get("next"))
	pw := r.PostForm.Get("password")
	if pw == "" {
		s.cfg.Audit.Refused(r, s.cfg.Type, auth.ReasonMalformed, u.Name)
		s.renderReauth(w, r, refusal.WrongPassword.Reply(), u.Name, token, next)
		return
	}
	ok, err := s.cfg.Attempts.Count(r, u.Name, func(ctx context.Context) (bool, error) {
		return s.cfg.Passwords.Check(ctx, u.Name, pw)
	})
	if err != nil {
		if rp, ok := s.cfg.Pages.ReplyTo(w, r, err, "auth: checking a password given again failed with an error"); ok {
			s.renderReauth(w, r, rp, u.Name, token, next)
		}
		return
	}
	if !ok {
		s.cfg.Audit.Refused(r, s.cfg.Type, auth.ReasonBadCredentials, u.Name)
		s.renderReauth(w, r, refusal.WrongPassword.Reply(), u.Name, token, next)
		return
	}
	s.cfg.Attempts.Forget(r, u.Name)
	d := session.Data{Username: sess.Username, Cred: sess.Cred, Attrs: sess.Attrs.With(AttrReauth, strconv.FormatInt(s.cfg.Now().Unix(), 10))}
	if _, err := s.cfg.Guard.Manager().Restart(w, r, sess, d); err != nil {
		s.cfg.Errs.Error(w, r, fmt.Errorf("login: recording the password given again: %w", err))
		return
	}
	s.cfg.Log.InfoContext(r.Context(), "auth: password given again", "auth_type", s.cfg.Type, "user", u.Name)
	sessionauth.SeeOther(w, next)
}

// renderReauth writes the password page with the refusal rp (JSON for a
// client that asks for it). Its Cancel link goes to the catalog: next
// itself would ask for the password again.
func (s *Step) renderReauth(w http.ResponseWriter, r *http.Request, rp refusal.Reply, user, token, next string) {
	if rp.Status >= http.StatusBadRequest && s.cfg.Errs.WantsJSON(r) {
		s.cfg.Errs.Send(w, r, rp)
		return
	}
	page := ui.ReauthPage{StepForm: ui.StepForm{
		Brand: ui.BrandOf(r.Context()), Title: msgReauthTitle, Action: ReauthPath,
		CSRFToken: token, Next: next, User: user, Error: rp.Message, StartOver: "/",
	}}
	s.renderStep(w, r, rp.Status, "reauth", "the password page", "", page)
}
