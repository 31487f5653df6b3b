package secondfactor

import (
	"context"
	"encoding/json"
	"errors"
	"html/template"
	"net/http"

	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/factors"
	"github.com/backupweb/backupweb/internal/qr"
	"github.com/backupweb/backupweb/internal/refusal"
	"github.com/backupweb/backupweb/internal/ui"
)

// enrolment is what an enrolment page carries in its hidden enrolment
// field, sealed (session.Manager.Seal) for PendingLifetime: the new
// secret, for the user and the pending state it was shown to.
type enrolment struct {
	User   string `json:"u"`
	Nonce  string `json:"n"`
	Secret string `json:"s"`
}

// serveEnrol is GET on EnrolPath: for a pending user who must enrol, a
// fresh TOTP secret as a QR code and as text, and the form to confirm it.
func (s *Step) serveEnrol(w http.ResponseWriter, r *http.Request) {
	st, next, ok := s.pendingPage(w, r, EnrolPath)
	if !ok {
		return
	}
	key, err := factors.NewTOTPKey(ui.BrandOf(r.Context()).Name(), st.User)
	if err != nil {
		s.cfg.Errs.Error(w, r, err)
		return
	}
	s.renderEnrol(w, r, refusal.Reply{Status: http.StatusOK}, st, key.Secret(), key.URL(), next)
}

// serveEnrolPost is POST on EnrolPath: the code from the new secret. In
// order: the form (400, 413), its CSRF token (403), the pending state
// (401), the user's factors (none yet), the sealed secret (401 when
// expired or another's), the limits (429), the code (401, counted as a
// failure), the single use of the pending state (401); then the secret
// and ten recovery codes are stored, the session starts with a fresh id,
// and the recovery codes are shown, once, with a link on to next.
func (s *Step) serveEnrolPost(w http.ResponseWriter, r *http.Request) {
	st, next, ok := s.pendingForm(w, r, EnrolPath)
	if !ok {
		return
	}
	en, ok := s.openEnrolment(r.PostForm.Get("enrolment"), st)
	if !ok {
		s.cfg.Audit.Refused(r, s.cfg.Type, auth.ReasonPendingExpired, st.User)
		s.cfg.Pages.Login(w, r, refusal.EnrolExpired.Reply(), "", next)
		return
	}
	code, ok := s.postedCode(w, r, st.User, next)
	if !ok {
		return
	}
	v, ok := s.attempt(w, r, st.User, next, func(ctx context.Context) (codeVerdict, bool, error) {
		return s.checkTOTP(ctx, st.User, en.Secret, code)
	})
	if !ok {
		return
	}
	s.complete(w, r, st, v, next, func() ([]string, bool) {
		codes, err := s.storeEnrolment(st.User, en.Secret)
		switch {
		case errors.Is(err, errEnrolled):
			s.cfg.Audit.Refused(r, s.cfg.Type, auth.ReasonPendingExpired, st.User)
			s.endPending(w, r)
			s.cfg.Pages.Login(w, r, refusal.EnrolledMeanwhile.Reply(), "", next)
			return nil, false
		case err != nil:
			s.cfg.Errs.Error(w, r, err)
			return nil, false
		}
		s.cfg.Log.InfoContext(r.Context(), "auth: second factor enrolled", "auth_type", s.cfg.Type, "user", st.User, "factor", "totp", "where", s.cfg.Where())
		return codes, true
	})
}

// errEnrolled refuses to enrol a user who has a factor: only they, signed
// in with it, or an administrator may change it.
var errEnrolled = errors.New("login: the user has a second factor already")

// storeEnrolment stores user's new TOTP secret and ten new recovery codes,
// unless they have a factor by now, and returns the codes.
func (s *Step) storeEnrolment(user, secret string) ([]string, error) {
	keys := s.cfg.Keys
	return s.newRecovery(user, func(rec *factors.Record) error {
		if rec.HasFactor() {
			return errEnrolled
		}
		rec.TOTP = &factors.TOTP{Sealed: keys.SealTOTP(user, secret), Added: s.cfg.Now().UTC()}
		return nil
	})
}

// newRecovery stores ten new recovery codes for user, with what change
// (when not nil) does to their record first, and returns the codes. An
// error of change stores nothing.
func (s *Step) newRecovery(user string, change func(*factors.Record) error) ([]string, error) {
	keys := s.cfg.Keys
	var codes []string
	err := s.cfg.State.EditFactors(context.Background(), user, func(rec *factors.Record) error {
		if len(rec.Handle) == 0 {
			rec.Handle = factors.NewHandle()
		}
		if change != nil {
			if err := change(rec); err != nil {
				return err
			}
		}
		codes, rec.Recovery = keys.NewRecoveryCodes(user)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return codes, nil
}

// openEnrolment returns the enrolment sealed in v when it is ours,
// unexpired, and for this pending state.
func (s *Step) openEnrolment(v string, st pending) (enrolment, bool) {
	if v == "" {
		return enrolment{}, false
	}
	b, err := s.cfg.Guard.Manager().Open(sealEnrolment, v)
	if err != nil {
		return enrolment{}, false
	}
	var en enrolment
	if json.Unmarshal(b, &en) != nil || en.User != st.User || en.Nonce != st.Nonce || en.Secret == "" {
		return enrolment{}, false
	}
	return en, true
}

// renderEnrol writes the enrolment page for secret (uri its otpauth://
// URI), with the sealed secret in its form.
func (s *Step) renderEnrol(w http.ResponseWriter, r *http.Request, rp refusal.Reply, st pending, secret, uri, next string) {
	if rp.Status >= http.StatusBadRequest && s.cfg.Errs.WantsJSON(r) {
		s.cfg.Errs.Send(w, r, rp)
		return
	}
	b, _ := json.Marshal(enrolment{User: st.User, Nonce: st.Nonce, Secret: secret})
	sealed, err := s.cfg.Guard.Manager().Seal(sealEnrolment, b, PendingLifetime)
	if err != nil {
		s.cfg.Errs.Error(w, r, err)
		return
	}
	m, err := qr.Matrix(uri)
	if err != nil {
		s.cfg.Errs.Error(w, r, err)
		return
	}
	page := ui.EnrolPage{
		StepForm: s.stepForm(w, r, msgEnrolTitle, EnrolPath, st.User, next, rp),
		QR:       template.HTML(qr.SVG(m, "QR code to scan with an authenticator app")),
		Secret:   secret, Enrolment: sealed,
	}
	page.Passkey = s.enrolSlotFor(next)
	s.renderStep(w, r, rp.Status, "enrol", "the enrolment page", page.Passkey, page)
}

// renderEnrolAgain shows the enrolment page again after a refused code,
// with the same secret (from the posted form), so that the app the user
// set up stays good.
func (s *Step) renderEnrolAgain(w http.ResponseWriter, r *http.Request, rp refusal.Reply, user, next string) {
	st, ok := s.pendingOf(r)
	en, ok2 := s.openEnrolment(r.PostForm.Get("enrolment"), st)
	if !ok || !ok2 || st.User != user {
		s.cfg.Pages.Login(w, r, rp, "", next)
		return
	}
	uri, err := factors.TOTPURI(ui.BrandOf(r.Context()).Name(), user, en.Secret)
	if err != nil {
		s.cfg.Errs.Error(w, r, err)
		return
	}
	s.renderEnrol(w, r, rp, st, en.Secret, uri, next)
}

// showRecovery shows the recovery codes of a new enrolment, once, with a
// link on to next.
func (s *Step) showRecovery(w http.ResponseWriter, r *http.Request, user, next string, codes []string) {
	page := ui.EnrolPage{
		StepForm: ui.StepForm{Brand: ui.BrandOf(r.Context()), Title: msgEnrolTitle, User: user, Next: next},
		Recovery: codes,
	}
	s.renderStep(w, r, http.StatusOK, "enrol", "the recovery codes", "", page)
}
