package secondfactor

import (
	"context"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/backupweb/backupweb/internal/attrs"
	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/auth/sessionauth"
	"github.com/backupweb/backupweb/internal/factors"
	"github.com/backupweb/backupweb/internal/refusal"
	"github.com/backupweb/backupweb/internal/session"
	"github.com/backupweb/backupweb/internal/ui"
	"github.com/backupweb/backupweb/internal/userfile"
)

// maxFormBytes bounds a posted form: a code, two tokens, a next path
// and a sealed enrolment fit many times over.
const maxFormBytes = 64 << 10

// Messages of the second-factor step.
const (
	msgSecondTitle = "Verify it is you"
	msgEnrolTitle  = "Set up a second factor"
)

// errNoBinding refuses a pending state without the form cookie to bind it
// to.
var errNoBinding = errors.New("login: the sign-in form's cookie is missing")

// AttrSecondFactor is the session attribute (session.Data.Attrs) that
// names the second factor that completed the sign-in: "totp" or
// "recovery" (auth.User.SecondFactor).
const AttrSecondFactor = auth.AttrSecondFactor

// AttrStepSkipped is the session attribute ("1") of a session made with
// the password alone while second_factor was off: it skipped the step a
// user with a factor is now asked for. Once a reload turns the second
// factor on, such a session of a user with a factor is refused at its
// next request (the sign-in's check of its sessions), as a password-only session is under
// required.
const AttrStepSkipped = "factor_step_skipped"

// withNext returns path with ?next= when next is not the default.
func withNext(path, next string) string {
	if next == "" || next == "/" {
		return path
	}
	return path + "?next=" + url.QueryEscape(next)
}

// AfterPassword runs after a right password: for a user with a factor it
// starts the pending state and sends the browser to the second-factor
// step; with required, a user without one goes to the enrolment; a user
// whose record cannot be used is refused. It reports whether it answered
// (false: the password alone signs in).
func (s *Step) AfterPassword(w http.ResponseWriter, r *http.Request, name, cred string, groups []string, email, next string) bool {
	if !s.on() {
		return false
	}
	_, st, err := s.factorsOf(r.Context(), name)
	path := SecondFactorPath
	switch {
	case err != nil:
		// Never the password alone: 503 with Retry-After.
		s.cfg.Audit.Refused(r, s.cfg.Type, auth.ReasonFactorsBroken, userfile.LogName(name))
		if rp, ok := s.cfg.Pages.ReplyTo(w, r, err, "auth: reading the second factors failed"); ok {
			s.cfg.Pages.Login(w, r, rp, name, next)
		}
		return true
	case st == factors.Broken:
		s.cfg.Audit.Refused(r, s.cfg.Type, auth.ReasonFactorsBroken, userfile.LogName(name))
		s.cfg.Pages.Login(w, r, refusal.FactorsUnusable.Reply(), name, next)
		return true
	case st == factors.Enrolled:
	case s.cfg.Mode() == Required:
		path = EnrolPath
	default:
		return false
	}
	if err := s.beginPending(w, r, name, cred, groups, email, st != factors.Enrolled); err != nil {
		s.cfg.Errs.Error(w, r, fmt.Errorf("starting the second-factor step: %w", err))
		return true
	}
	w.Header().Set("Cache-Control", "no-store")
	sessionauth.SeeOther(w, withNext(path, next))
	return true
}

// serveSecondFactor is GET on SecondFactorPath: the code form, for a
// browser with a pending state; others go back to the sign-in page.
func (s *Step) serveSecondFactor(w http.ResponseWriter, r *http.Request) {
	st, next, ok := s.pendingPage(w, r, SecondFactorPath)
	if !ok {
		return
	}
	s.renderSecond(w, r, refusal.Reply{Status: http.StatusOK}, st.User, next)
}

// pendingPage returns the pending state of a GET on a page of the second
// step (here) and its next: a browser without one starts over, one whose
// state is spent (the step was completed, or the cookie replayed) is told
// the sign-in expired or was completed, on the sign-in page (401), rather
// than shown a form that can only fail; one whose factors belong
// elsewhere is sent there. ok false: it answered.
func (s *Step) pendingPage(w http.ResponseWriter, r *http.Request, here string) (st pending, next string, ok bool) {
	next = s.cfg.Guard.SafeNext(r.URL.Query().Get("next"))
	st, ok = s.pendingOf(r)
	if !ok {
		s.startOver(w, r, next)
		return pending{}, "", false
	}
	spent, err := s.cfg.Spent(r.Context(), spendPending, st.Nonce)
	if err != nil {
		s.renderSecondError(w, r, fmt.Errorf("login: checking the second-factor step: %w", err), st.User, next)
		return pending{}, "", false
	}
	if spent {
		s.pendingSpent(w, r, st.User, next)
		return pending{}, "", false
	}
	if s.routeByStatus(w, r, st.User, next, here) {
		return pending{}, "", false
	}
	return st, next, true
}

// routeByStatus sends a pending user to where their factors say they
// belong, when that is not here: the step when they have a factor, the
// enrolment when they must enrol, a refusal when their record is broken
// or when an enrolment is posted for a user who has a factor by now
// (409).
// It reports whether it answered.
func (s *Step) routeByStatus(w http.ResponseWriter, r *http.Request, user, next, here string) bool {
	_, st, err := s.factorsOf(r.Context(), user)
	want := SecondFactorPath
	switch {
	case err != nil:
		s.renderSecondError(w, r, err, user, next)
		return true
	case st == factors.Broken:
		s.cfg.Audit.Refused(r, s.cfg.Type, auth.ReasonFactorsBroken, user)
		s.endPending(w, r)
		s.cfg.Pages.Login(w, r, refusal.FactorsUnusable.Reply(), user, next)
		return true
	case st == factors.None && s.cfg.Mode() == Required:
		want = EnrolPath
	case st == factors.None:
		// The factor went away and none is required: sign in again with
		// the password alone.
		s.endPending(w, r)
		s.startOver(w, r, next)
		return true
	case here == EnrolPath && r.Method == http.MethodPost:
		// An enrolment posted after another of the user's finished:
		// refused (409), as when both reach the factors file together.
		s.cfg.Audit.Refused(r, s.cfg.Type, auth.ReasonPendingExpired, user)
		s.endPending(w, r)
		s.cfg.Pages.Login(w, r, refusal.EnrolledMeanwhile.Reply(), "", next)
		return true
	}
	if want == here {
		return false
	}
	sessionauth.SeeOther(w, withNext(want, next))
	return true
}

// pendingSpent refuses user's pending state that can no longer be used
// (already spent, or the user or password changed since): the refusal is
// logged, the state ends and the sign-in page says the step is over.
func (s *Step) pendingSpent(w http.ResponseWriter, r *http.Request, user, next string) {
	s.cfg.Audit.Refused(r, s.cfg.Type, auth.ReasonPendingExpired, user)
	s.endPending(w, r)
	s.cfg.Pages.Login(w, r, refusal.SecondStepExpired.Reply(), "", next)
}

// startOver answers a request without a usable pending state: a browser
// goes to the sign-in page, an API client gets 401.
func (s *Step) startOver(w http.ResponseWriter, r *http.Request, next string) {
	w.Header().Set("Cache-Control", "no-store")
	if s.cfg.Errs.WantsJSON(r) || r.Method != http.MethodGet {
		s.cfg.Pages.Login(w, r, refusal.SecondStepExpired.Reply(), "", next)
		return
	}
	sessionauth.SeeOther(w, s.cfg.Guard.LoginURLFor(next))
}

// serveSecondFactorPost is POST on SecondFactorPath. In order: the form
// (400, 413), its CSRF token (403), the pending state (401 when missing,
// expired, or bound to another browser), an empty code (401), the
// failure limits of the address and of the name or device, shared with
// the password (429), the code (401 when wrong or already used; counted
// as a failure), the single use of the pending state (401 when used);
// then the session starts with a fresh id and the factor named, and the
// browser goes to next.
func (s *Step) serveSecondFactorPost(w http.ResponseWriter, r *http.Request) {
	st, next, ok := s.pendingForm(w, r, SecondFactorPath)
	if !ok {
		return
	}
	code, ok := s.postedCode(w, r, st.User, next)
	if !ok {
		return
	}
	v, ok := s.attempt(w, r, st.User, next, func(ctx context.Context) (codeVerdict, bool, error) {
		return s.checkCode(ctx, st.User, code)
	})
	if !ok {
		return
	}
	s.complete(w, r, st, v, next, nil)
}

// pendingForm reads the form posted to the second-factor step or the
// enrolment (here, the path it was posted to) and returns the pending
// state and next. In order: the form (400, 413), its CSRF token (403; the
// code form again when the step still stands), the pending state (401
// when missing, expired, bound to another browser, or its user's password
// changed), and where the user's factors say they belong (see
// routeByStatus). ok false: it answered.
func (s *Step) pendingForm(w http.ResponseWriter, r *http.Request, here string) (st pending, next string, ok bool) {
	if !s.parseForm(w, r) {
		return pending{}, "", false
	}
	next = s.cfg.Guard.SafeNext(r.PostForm.Get("next"))
	st, ok = s.pendingOf(r)
	if !s.cfg.Guard.Manager().CheckFormToken(r, r.PostForm.Get("csrf_token")) {
		s.cfg.Audit.Refused(r, s.cfg.Type, auth.ReasonBadCSRF, st.User)
		if ok && here == SecondFactorPath {
			s.renderSecond(w, r, refusal.FormExpired.Reply(), st.User, next)
		} else {
			s.cfg.Pages.Login(w, r, refusal.FormExpired.Reply(), "", next)
		}
		return pending{}, "", false
	}
	if !ok || !s.cfg.Users.Admits(st.User, st.Cred) {
		s.pendingSpent(w, r, st.User, next)
		return pending{}, "", false
	}
	if s.routeByStatus(w, r, st.User, next, here) {
		return pending{}, "", false
	}
	return st, next, true
}

// postedCode returns the posted code, trimmed; an empty one is refused
// (401) on the page it came from. ok false: it answered.
func (s *Step) postedCode(w http.ResponseWriter, r *http.Request, user, next string) (string, bool) {
	code := strings.TrimSpace(r.PostForm.Get("code"))
	if code == "" {
		s.cfg.Audit.Refused(r, s.cfg.Type, auth.ReasonMalformed, user)
		s.renderAfterCode(w, r, refusal.CodeEmpty.Reply(), user, next)
		return "", false
	}
	return code, true
}

// complete ends a second-factor step that succeeded: the pending state is
// spent (401 when it was already), then the code v checked (401 when it
// was spent meanwhile: of a TOTP code and a recovery code sent at once
// for one pending state, one completes it and the other's code stays
// unspent), commit runs when not nil (an
// enrolment's: it stores the factor and returns the recovery codes to
// show, or answers and returns false), the user's failure count is
// forgotten, the session started with a fresh id and the factor named,
// and the browser sent to next, or shown the recovery codes.
func (s *Step) complete(w http.ResponseWriter, r *http.Request, st pending, v codeVerdict, next string, commit func() ([]string, bool)) {
	fresh, err := s.cfg.Spend(r.Context(), spendPending, st.Nonce, PendingLifetime)
	if err != nil {
		s.renderSecondError(w, r, fmt.Errorf("login: recording the use of the second-factor step: %w", err), st.User, next)
		return
	}
	if !fresh {
		s.pendingSpent(w, r, st.User, next)
		return
	}
	if v.spend != nil {
		fresh, err := v.spend(r.Context())
		if err != nil {
			s.renderSecondError(w, r, err, st.User, next)
			return
		}
		if !fresh {
			s.cfg.Audit.Refused(r, s.cfg.Type, auth.ReasonCodeUsed, st.User)
			s.endPending(w, r)
			s.cfg.Pages.Login(w, r, refusal.CodeUsed.Reply(), "", next)
			return
		}
	}
	factor := v.factor
	var codes []string
	if commit != nil {
		var ok bool
		if codes, ok = commit(); !ok {
			return
		}
	}
	if !s.beginAfterFactor(w, r, st, factor) {
		return
	}
	if commit != nil {
		s.showRecovery(w, r, st.User, next, codes)
		return
	}
	sessionauth.SeeOther(w, next)
}

// renderSecondError answers an error of the second-factor step by
// refusal.ReplyTo (429 with Retry-After, 503...).
func (s *Step) renderSecondError(w http.ResponseWriter, r *http.Request, err error, user, next string) {
	if rp, ok := s.cfg.Pages.ReplyTo(w, r, err, "auth: second factor failed with an error"); ok {
		s.renderAfterCode(w, r, rp, user, next)
	}
}

// renderSecond writes the second-factor page (JSON for a refusal to an
// API client, by the one refusal rule).
func (s *Step) renderSecond(w http.ResponseWriter, r *http.Request, rp refusal.Reply, user, next string) {
	if rp.Status >= http.StatusBadRequest && s.cfg.Errs.WantsJSON(r) {
		s.cfg.Errs.Send(w, r, rp)
		return
	}
	rec, _, _ := s.factorsOf(r.Context(), user)
	page := ui.SecondFactorPage{StepForm: s.stepForm(w, r, msgSecondTitle, SecondFactorPath, user, next, rp), HasTOTP: rec != nil && rec.TOTP != nil}
	if page.Next == "/" {
		page.Next = ""
	}
	if s.passkeySlot != nil {
		page.Passkey = s.passkeySlot(r, user)
	}
	s.renderStep(w, r, rp.Status, "secondfactor", "the second-factor page", page.Passkey, page)
}

// stepForm is what the second-factor and enrolment pages share, for user
// on the page at path, with rp's message.
func (s *Step) stepForm(w http.ResponseWriter, r *http.Request, title, path, user, next string, rp refusal.Reply) ui.StepForm {
	return ui.StepForm{
		Brand: ui.BrandOf(r.Context()), Title: title, Action: withNext(path, next),
		CSRFToken: s.cfg.Guard.Manager().FormToken(w, r), Next: next, User: user, Error: rp.Message,
		StartOver: s.cfg.Guard.LoginURLFor(next),
	}
}

// renderStep writes the page name of the second step with data, never
// cached, allowing the passkey script when passkey shows; a failure is
// logged as one of rendering what.
func (s *Step) renderStep(w http.ResponseWriter, r *http.Request, status int, name, what string, passkey template.HTML, data any) {
	w.Header().Set("Cache-Control", "no-store")
	if passkey != "" {
		ui.AllowScript(w.Header())
	}
	if err := ui.Render(w, status, name, data); err != nil {
		s.cfg.Log.ErrorContext(r.Context(), "auth: rendering "+what, "auth_type", s.cfg.Type, "err", err)
	}
}

// parseForm reads a posted form of bounded size, answering 413 or 400
// when it cannot. It reports whether the form was read.
func (s *Step) parseForm(w http.ResponseWriter, r *http.Request) bool {
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	if err := r.ParseForm(); err != nil {
		w.Header().Set("Cache-Control", "no-store")
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			s.cfg.Errs.Refuse(w, r, refusal.FormTooLarge)
			return false
		}
		s.cfg.Errs.Refuse(w, r, refusal.BadForm)
		return false
	}
	return true
}

// beginAfterFactor makes the full session of st's user once factor (a
// code, a recovery code or a passkey) completed the sign-in: the failures
// of the name or device are forgotten, the session starts with a new id
// and names its factor, the pending state ends, the device cookie is
// issued and the sign-in logged. false: an error was answered.
func (s *Step) beginAfterFactor(w http.ResponseWriter, r *http.Request, st pending, factor string) bool {
	s.cfg.Attempts.Forget(r, st.User)
	facts := map[string]string{AttrSecondFactor: factor}
	if st.At != 0 {
		facts[AttrReauth] = strconv.FormatInt(st.At, 10)
	}
	if s.cfg.DirectoryAttrs != nil {
		s.cfg.DirectoryAttrs(facts, st.Groups, st.Email)
	}
	d := session.Data{Username: st.User, Cred: st.Cred, Attrs: attrs.Of(facts)}
	if err := s.cfg.Guard.Begin(w, r, d); err != nil {
		s.cfg.Errs.Error(w, r, fmt.Errorf("starting the session: %w", err))
		return false
	}
	s.endPending(w, r)
	s.cfg.Devices.Issue(w, r, st.User)
	s.cfg.Audit.SignedIn(r, s.cfg.Type, st.User)
	return true
}
