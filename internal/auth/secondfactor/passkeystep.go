package secondfactor

import (
	"context"
	"errors"
	"fmt"
	"html/template"
	"net/http"

	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/auth/sessionauth"
	"github.com/backupweb/backupweb/internal/factors"
	"github.com/backupweb/backupweb/internal/passkey"
	"github.com/backupweb/backupweb/internal/refusal"
	"github.com/backupweb/backupweb/internal/ui"
)

// Routes of the passkey at the second-factor step (a user with a passkey
// completes the sign-in) and at the enrolment (with second_factor =
// required, a user without a factor registers a passkey as their first).
// They answer the passkey script in JSON, for a browser with a pending
// state, and carry the sign-in form's CSRF token in X-CSRF-Token.
const (
	SecondFactorPasskeyBegin  = SecondFactorPath + "/passkey/begin"
	SecondFactorPasskeyFinish = SecondFactorPath + "/passkey/finish"
	EnrolPasskeyBegin         = EnrolPath + "/passkey/begin"
	EnrolPasskeyFinish        = EnrolPath + "/passkey/finish"
)

// mountPasskeySteps adds the passkey routes of the second-factor step and
// of the enrolment.
func (s *Step) mountPasskeySteps(mux sessionauth.Routes) {
	mux.HandleFunc("POST "+SecondFactorPasskeyBegin, s.beginSecondPasskey)
	mux.HandleFunc("POST "+SecondFactorPasskeyFinish, s.finishSecondPasskey)
	// The enrolment's passkey is offered with required only: with
	// optional there is no enrolment at sign-in.
	required := func(h http.HandlerFunc) func(http.ResponseWriter, *http.Request) {
		return func(w http.ResponseWriter, r *http.Request) {
			if s.cfg.Mode() != Required {
				s.cfg.Errs.Refuse(w, r, refusal.NoRoute)
				return
			}
			h(w, r)
		}
	}
	mux.HandleFunc("POST "+EnrolPasskeyBegin, required(s.beginEnrolPasskey))
	mux.HandleFunc("POST "+EnrolPasskeyFinish, required(s.finishEnrolPasskey))
}

// passkeySlotFor is the passkey part of the second-factor page (see
// Step.passkeySlot): a "Use a passkey" button for a user with a passkey.
func (s *Step) passkeySlotFor(r *http.Request, user string) template.HTML {
	rec, st, err := s.factorsOf(r.Context(), user)
	if err != nil || st != factors.Enrolled || rec == nil || len(rec.Passkeys) == 0 {
		return ""
	}
	next := s.cfg.Guard.SafeNext(r.FormValue("next"))
	return ui.PasskeySlotHTML(ui.PasskeySlot{BeginURL: SecondFactorPasskeyBegin, FinishURL: SecondFactorPasskeyFinish, Next: next})
}

// enrolSlotFor is the passkey part of the enrolment page: a form that
// registers a passkey instead of an authenticator app.
func (s *Step) enrolSlotFor(next string) template.HTML {
	if s.cfg.Passkeys == nil || s.cfg.Mode() != Required {
		return ""
	}
	return ui.PasskeySlotHTML(ui.PasskeySlot{BeginURL: EnrolPasskeyBegin, FinishURL: withNext(EnrolPasskeyFinish, next), Next: next, Register: true})
}

// pendingJSON returns the pending state of r for a passkey route whose
// user's factors must say want (Enrolled at the step, None at the
// enrolment). The sign-in form's CSRF token comes in X-CSRF-Token. ok
// false: a refusal was written (403, 401, 409).
func (s *Step) pendingJSON(w http.ResponseWriter, r *http.Request, want factors.Status) (pending, bool) {
	st, ok := s.pendingOf(r)
	if !s.cfg.Guard.Manager().CheckFormToken(r, r.Header.Get(sessionauth.CSRFHeader)) {
		s.cfg.Audit.Refused(r, s.cfg.Type, auth.ReasonBadCSRF, st.User)
		s.cfg.Errs.Refuse(w, r, refusal.FormExpired)
		return pending{}, false
	}
	if !ok || !s.cfg.Users.Admits(st.User, st.Cred) {
		s.cfg.Audit.Refused(r, s.cfg.Type, auth.ReasonPendingExpired, st.User)
		s.endPending(w, r)
		s.cfg.Errs.Refuse(w, r, refusal.SecondStepExpired)
		return pending{}, false
	}
	switch _, got, err := s.factorsOf(r.Context(), st.User); {
	case err != nil:
		s.cfg.Errs.Error(w, r, fmt.Errorf("login: reading the second factors: %w", err))
		return pending{}, false
	case got == factors.Broken:
		s.cfg.Audit.Refused(r, s.cfg.Type, auth.ReasonFactorsBroken, st.User)
		s.endPending(w, r)
		s.cfg.Errs.Refuse(w, r, refusal.FactorsUnusable)
		return pending{}, false
	case got != want:
		// Enrolled meanwhile, or the factors were reset: start again.
		s.cfg.Audit.Refused(r, s.cfg.Type, auth.ReasonPendingExpired, st.User)
		s.endPending(w, r)
		s.cfg.Errs.Refuse(w, r, refusal.EnrolledMeanwhile)
		return pending{}, false
	}
	return st, true
}

// pendingRequest is pendingJSON, then the posted passkeyRequest. ok
// false: it answered.
func (s *Step) pendingRequest(w http.ResponseWriter, r *http.Request, want factors.Status) (pending, passkeyRequest, bool) {
	st, ok := s.pendingJSON(w, r, want)
	if !ok {
		return pending{}, passkeyRequest{}, false
	}
	req, ok := s.readPasskeyRequest(w, r)
	return st, req, ok
}

// beginSecondPasskey is POST SecondFactorPasskeyBegin.
func (s *Step) beginSecondPasskey(w http.ResponseWriter, r *http.Request) {
	st, req, ok := s.pendingRequest(w, r, factors.Enrolled)
	if !ok || !s.mayBegin(w, r) {
		return
	}
	b, err := s.cfg.Passkeys.BeginLogin(r.Context(), st.User, s.cfg.Guard.SafeNext(req.Next))
	if errors.Is(err, passkey.ErrNoPasskeys) {
		s.cfg.Audit.RefusedDetail(r, s.cfg.Type, auth.ReasonPasskeyRefused, "the user has no passkey", st.User)
		s.cfg.Errs.Refuse(w, r, refusal.PasskeyRefused)
		return
	}
	s.writeBegun(w, r, b, err)
}

// finishSecondPasskey is POST SecondFactorPasskeyFinish: the browser's
// answer, counted against the same limits as the password (the address,
// and the name or device); a right one completes the sign-in.
func (s *Step) finishSecondPasskey(w http.ResponseWriter, r *http.Request) {
	st, req, ok := s.pendingRequest(w, r, factors.Enrolled)
	if !ok {
		return
	}
	// The pending state is spent before the assertion is checked, so
	// that of a passkey and a code sent at once for one sign-in, the one
	// that loses consumes nothing: its sign count is not moved, its code
	// not spent. A refused assertion then ends the step too.
	var next string
	s.completeJSON(w, r, st, SecondFactorPasskey, &next, func() ([]string, bool) {
		v, err := s.counted(r, st.User, func(ctx context.Context) (passkey.Verdict, error) {
			return s.cfg.Passkeys.FinishLogin(ctx, st.User, req.Ceremony, req.Credential)
		})
		if err != nil {
			s.cfg.Errs.Error(w, r, err)
			return nil, false
		}
		if !v.OK {
			v.User = st.User
			s.refusePasskey(w, r, v)
			return nil, false
		}
		next = v.Next
		return nil, true
	})
}

// beginEnrolPasskey is POST EnrolPasskeyBegin: a user who must enrol
// begins registering a passkey.
func (s *Step) beginEnrolPasskey(w http.ResponseWriter, r *http.Request) {
	st, ok := s.pendingJSON(w, r, factors.None)
	if !ok || !s.mayBegin(w, r) {
		return
	}
	b, err := s.cfg.Passkeys.BeginRegistration(r.Context(), st.User, true)
	s.writeBegun(w, r, b, err)
}

// finishEnrolPasskey is POST EnrolPasskeyFinish: the pending state is
// spent, the passkey stored with ten new recovery codes, the session
// started, and the answer carries the codes (shown once) and next. The
// passkey is stored only while the user still has no factor, checked
// under the factors file's lock: of two enrolments at once (a passkey and
// TOTP, or two passkeys) one is stored, the other gets 409.
func (s *Step) finishEnrolPasskey(w http.ResponseWriter, r *http.Request) {
	st, req, ok := s.pendingRequest(w, r, factors.None)
	if !ok {
		return
	}
	name, ok := s.passkeyName(w, r, req.Name)
	if !ok {
		return
	}
	next := s.cfg.Guard.SafeNext(r.URL.Query().Get("next"))
	s.completeJSON(w, r, st, SecondFactorPasskey, &next, func() ([]string, bool) {
		v, err := s.cfg.Passkeys.FinishRegistration(r.Context(), st.User, req.Ceremony, name, req.Credential)
		if errors.Is(err, passkey.ErrFactorsChanged) {
			// Another enrolment of the user finished first.
			s.cfg.Audit.Refused(r, s.cfg.Type, auth.ReasonPendingExpired, st.User)
			s.cfg.Errs.Refuse(w, r, refusal.EnrolledMeanwhile)
			return nil, false
		}
		if err != nil {
			s.cfg.Errs.Error(w, r, err)
			return nil, false
		}
		if !v.OK {
			s.cfg.Audit.RefusedDetail(r, s.cfg.Type, auth.ReasonPasskeyRefused, v.Reason+": "+v.Detail, st.User)
			s.cfg.Errs.Refuse(w, r, refusal.PasskeyNotAddedAtSignIn)
			return nil, false
		}
		codes, err := s.newRecovery(st.User, nil)
		if err != nil {
			s.cfg.Errs.Error(w, r, err)
			return nil, false
		}
		s.cfg.Log.InfoContext(r.Context(), "auth: second factor enrolled", "auth_type", s.cfg.Type, "user", st.User, "factor", SecondFactorPasskey, "where", s.cfg.Where())
		return codes, true
	})
}

// completeJSON is the end of a second-factor step the passkey script
// made, as complete is for the forms: the pending state is spent (401
// when it was already), commit runs when not nil (it answers and returns
// false on failure; it may set *next), the user's failure count is forgotten, the session
// started with a fresh id and the factor named, and the answer is
// {"next": ..., "recovery": [...]} (the codes commit returned, if any).
func (s *Step) completeJSON(w http.ResponseWriter, r *http.Request, st pending, factor string, next *string, commit func() ([]string, bool)) {
	fresh, err := s.cfg.Spend(r.Context(), spendPending, st.Nonce, PendingLifetime)
	if err != nil {
		s.cfg.Errs.Error(w, r, fmt.Errorf("login: recording the use of the second-factor step: %w", err))
		return
	}
	if !fresh {
		s.cfg.Audit.Refused(r, s.cfg.Type, auth.ReasonPendingExpired, st.User)
		s.endPending(w, r)
		s.cfg.Errs.Refuse(w, r, refusal.SecondStepExpired)
		return
	}
	var codes []string
	if commit != nil {
		var ok bool
		if codes, ok = commit(); !ok {
			s.endPending(w, r)
			return
		}
	}
	if !s.beginAfterFactor(w, r, st, factor) {
		return
	}
	writeJSON(w, struct {
		Next     string   `json:"next"`
		Recovery []string `json:"recovery,omitempty"`
	}{s.cfg.Guard.SafeNext(*next), codes})
}
