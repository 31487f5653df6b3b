package secondfactor

import (
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/backupweb/backupweb/internal/attrs"
	"io"
	"maps"
	"net/http"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/auth/sessionauth"
	"github.com/backupweb/backupweb/internal/exactjson"
	"github.com/backupweb/backupweb/internal/passkey"
	"github.com/backupweb/backupweb/internal/peer"
	"github.com/backupweb/backupweb/internal/refusal"
	"github.com/backupweb/backupweb/internal/session"
	"github.com/backupweb/backupweb/internal/ui"
)

// Routes of the passkeys. PasskeysPath is the page a signed-in user
// manages their passkeys on; the others answer the page's script, in JSON.
const (
	PasskeysPath        = "/_backupweb/passkeys"
	PasskeysBeginPath   = PasskeysPath + "/begin"
	PasskeysFinishPath  = PasskeysPath + "/finish"
	PasskeysRemovePath  = PasskeysPath + "/remove"
	PasskeyLoginBegin   = "/_backupweb/passkey-login/begin"
	PasskeyLoginFinish  = "/_backupweb/passkey-login/finish"
	maxPasskeyBody      = 64 << 10
	maxPasskeyNameRunes = 64
)

// Messages of the passkey routes.
const (
	msgPasskeyAdded   = "The passkey was added."
	msgPasskeyRemoved = "The passkey was removed."
	msgPasskeysTitle  = "Passkeys"
)

// SecondFactorPasskey is the value of auth.User.SecondFactor after a
// sign-in a passkey completed.
const SecondFactorPasskey = "passkey"

// mountPasskeys adds the passkey routes, when passkeys are in use.
func (s *Step) mountPasskeys(mux sessionauth.Routes) {
	if s.cfg.Passkeys == nil {
		return
	}
	mux.HandleFunc("GET "+PasskeysPath, s.servePasskeys)
	mux.HandleFunc("POST "+PasskeysBeginPath, s.beginRegistration)
	mux.HandleFunc("POST "+PasskeysFinishPath, s.finishRegistration)
	mux.HandleFunc("POST "+PasskeysRemovePath, s.removePasskey)
	s.mountPasskeySteps(mux)
	if s.cfg.PasskeyLogin {
		mux.HandleFunc("POST "+PasskeyLoginBegin, s.beginPasskeyLogin)
		mux.HandleFunc("POST "+PasskeyLoginFinish, s.finishPasskeyLogin)
	}
}

// LoginButton is the "Sign in with a passkey" button of the login page,
// when passkey_login is on (empty otherwise).
func (s *Step) LoginButton(next string) ui.PasskeyButton {
	if s.cfg.Passkeys == nil || !s.cfg.PasskeyLogin || !s.on() {
		return ui.PasskeyButton{}
	}
	return ui.PasskeyButton{BeginURL: PasskeyLoginBegin, FinishURL: PasskeyLoginFinish, Next: next, Label: "Sign in with a passkey"}
}

// signedIn returns the signed-in user of r and their session, checking the
// CSRF token when token is not nil: a wrong one is a 403 written here.
// ok false: the response is written (a challenge, a refusal, an error).
func (s *Step) signedIn(w http.ResponseWriter, r *http.Request, token *string) (auth.User, *session.Session, bool) {
	u, ok, err := s.cfg.Guard.Identify(r)
	if err != nil {
		s.cfg.Errs.Error(w, r, err)
		return auth.User{}, nil, false
	}
	if !ok {
		s.cfg.Guard.Challenge(w, r)
		return auth.User{}, nil, false
	}
	sess, ok, err := s.cfg.Guard.Manager().Load(r)
	if err != nil || !ok {
		s.cfg.Errs.Error(w, r, cmp.Or(err, errors.New("login: the session ended during the request")))
		return auth.User{}, nil, false
	}
	if token != nil && !s.cfg.Guard.Manager().ValidCSRF(sess, *token) {
		s.cfg.Audit.Refused(r, s.cfg.Type, auth.ReasonBadCSRF, u.Name)
		s.cfg.Errs.Refuse(w, r, refusal.PageStale)
		return auth.User{}, nil, false
	}
	return u, sess, true
}

// servePasskeys is GET /_backupweb/passkeys: the user's passkeys, a form
// to add one and a button to remove each. Adding and removing need the
// password given again (RequirePassword): without it, the browser is
// asked for it first.
func (s *Step) servePasskeys(w http.ResponseWriter, r *http.Request) {
	u, sess, ok := s.signedIn(w, r, nil)
	if !ok || !s.RequirePassword(w, r, u, r.URL.RequestURI()) {
		return
	}
	keys, err := s.cfg.Passkeys.Passkeys(r.Context(), u.Name)
	if err != nil {
		s.cfg.Errs.Error(w, r, fmt.Errorf("login: listing the passkeys of %s: %w", u.Name, err))
		return
	}
	token := s.cfg.Guard.Manager().CSRFToken(sess)
	page := ui.PasskeysPage{
		Brand: ui.BrandOf(r.Context()), Title: msgPasskeysTitle,
		User:      ui.Viewer{Name: u.Name, Type: u.Type, HasSession: true, CSRFToken: token},
		CSRFToken: token, BeginURL: PasskeysBeginPath, FinishURL: PasskeysFinishPath, RemoveURL: PasskeysRemovePath,
	}
	for _, k := range keys {
		page.Passkeys = append(page.Passkeys, ui.PasskeyRow{
			ID: base64.RawURLEncoding.EncodeToString(k.Credential.ID), Name: k.Name, Created: k.Created, LastUsed: k.LastUsed,
		})
	}
	switch q := r.URL.Query(); {
	case q.Has("added"):
		page.Notice = msgPasskeyAdded
	case q.Has("removed"):
		page.Notice = msgPasskeyRemoved
	}
	w.Header().Set("Cache-Control", "no-store")
	ui.AllowScript(w.Header())
	if err := ui.Render(w, http.StatusOK, "passkeys", page); err != nil {
		s.cfg.Log.ErrorContext(r.Context(), "auth: rendering the passkeys page", "auth_type", s.cfg.Type, "err", err)
	}
}

// passkeyRequest is what the script posts: the ceremony's id and the
// browser's answer (finish), the new passkey's name (registration), and
// where to go after (begin of a sign-in).
type passkeyRequest struct {
	Ceremony   string         `json:"ceremony"`
	Name       string         `json:"name"`
	Next       string         `json:"next"`
	Credential jsontext.Value `json:"credential"`
}

// readPasskeyRequest reads the JSON body of a passkey route with
// exactjson.Decode (exact member names, a member named twice refused);
// false: a 400 or 413 is written.
func (s *Step) readPasskeyRequest(w http.ResponseWriter, r *http.Request) (passkeyRequest, bool) {
	var req passkeyRequest
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxPasskeyBody))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			s.cfg.Errs.Refuse(w, r, refusal.TooLarge)
			return req, false
		}
		s.cfg.Errs.Refuse(w, r, refusal.BadRequest)
		return req, false
	}
	if err := exactjson.Decode(body, &req); err != nil {
		s.cfg.Errs.Refuse(w, r, refusal.BadRequest)
		return req, false
	}
	return req, true
}

// writeJSON answers 200 with v.
func writeJSON(w http.ResponseWriter, v any) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	json.NewEncoder(w).Encode(v)
}

// begunAnswer is the answer to a begin: the options for
// navigator.credentials and the ceremony's id.
type begunAnswer struct {
	Options  json.RawMessage `json:"options"`
	Ceremony string          `json:"ceremony"`
}

// writeBegun answers a begin with the ceremony b, or with err.
func (s *Step) writeBegun(w http.ResponseWriter, r *http.Request, b passkey.Begun, err error) {
	if err != nil {
		s.cfg.Errs.Error(w, r, err)
		return
	}
	writeJSON(w, begunAnswer{Options: b.Options, Ceremony: b.ID})
}

// beginRegistration is POST /_backupweb/passkeys/begin: with the
// password given again (else 403), the registration options.
func (s *Step) beginRegistration(w http.ResponseWriter, r *http.Request) {
	token := r.Header.Get(sessionauth.CSRFHeader)
	u, _, ok := s.signedIn(w, r, &token)
	if !ok || !s.RequirePassword(w, r, u, PasskeysPath) || !s.userMayBegin(w, r, u.Name) {
		return
	}
	b, err := s.cfg.Passkeys.BeginRegistration(r.Context(), u.Name, false)
	s.writeBegun(w, r, b, err)
}

// finishRegistration is POST /_backupweb/passkeys/finish: with the
// password given again (else 403), the passkey is stored unless the
// user's factors changed since the begin (409: another enrolment finished
// first).
func (s *Step) finishRegistration(w http.ResponseWriter, r *http.Request) {
	token := r.Header.Get(sessionauth.CSRFHeader)
	u, _, ok := s.signedIn(w, r, &token)
	if !ok || !s.RequirePassword(w, r, u, PasskeysPath) || !s.userMayBegin(w, r, u.Name) {
		return
	}
	req, ok := s.readPasskeyRequest(w, r)
	if !ok {
		return
	}
	name, ok := s.passkeyName(w, r, req.Name)
	if !ok {
		return
	}
	v, err := s.cfg.Passkeys.FinishRegistration(r.Context(), u.Name, req.Ceremony, name, req.Credential)
	if errors.Is(err, passkey.ErrFactorsChanged) {
		s.cfg.Log.WarnContext(r.Context(), "auth: a passkey registration was refused", "auth_type", s.cfg.Type,
			"user", u.Name, "client", peer.Of(r).String(), "reason", "factors changed meanwhile", "detail", "another second factor was added or removed since the registration began")
		s.cfg.Errs.Refuse(w, r, refusal.FactorsChanged)
		return
	}
	if err != nil {
		s.cfg.Errs.Error(w, r, err)
		return
	}
	if !v.OK {
		s.cfg.Log.WarnContext(r.Context(), "auth: a passkey registration was refused", "auth_type", s.cfg.Type,
			"user", u.Name, "client", peer.Of(r).String(), "reason", v.Reason, "detail", v.Detail)
		s.cfg.Errs.Refuse(w, r, refusal.PasskeyNotAdded)
		return
	}
	s.cfg.Log.InfoContext(r.Context(), "auth: passkey added", "auth_type", s.cfg.Type, "user", u.Name, "name", name)
	writeJSON(w, map[string]bool{"ok": true})
}

// passkeyName checks the name given to a new passkey: trimmed, 1 to 64
// characters, printable; another is refused (400). ok false: it answered.
func (s *Step) passkeyName(w http.ResponseWriter, r *http.Request, name string) (string, bool) {
	name = strings.TrimSpace(name)
	if name == "" || !utf8.ValidString(name) || utf8.RuneCountInString(name) > maxPasskeyNameRunes ||
		strings.ContainsFunc(name, func(r rune) bool { return !unicode.IsPrint(r) }) {
		s.cfg.Errs.Refuse(w, r, refusal.PasskeyName)
		return "", false
	}
	return name, true
}

// removePasskey is POST /_backupweb/passkeys/remove, a form: csrf_token
// and id (the credential id, base64url). With the password given again,
// 303 back to the page; without, to the password page first
// (RequirePassword), nothing removed.
func (s *Step) removePasskey(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	if err := r.ParseForm(); err != nil {
		s.cfg.Errs.Refuse(w, r, refusal.BadForm)
		return
	}
	token := r.PostForm.Get("csrf_token")
	u, _, ok := s.signedIn(w, r, &token)
	if !ok || !s.RequirePassword(w, r, u, PasskeysPath) {
		return
	}
	id, err := base64.RawURLEncoding.DecodeString(r.PostForm.Get("id"))
	if err != nil || len(id) == 0 {
		s.cfg.Errs.Refuse(w, r, refusal.BadForm)
		return
	}
	removed, err := s.cfg.Passkeys.Remove(r.Context(), u.Name, id)
	if err != nil {
		s.cfg.Errs.Error(w, r, fmt.Errorf("login: removing a passkey of %s: %w", u.Name, err))
		return
	}
	to := PasskeysPath
	if removed {
		s.cfg.Log.InfoContext(r.Context(), "auth: passkey removed", "auth_type", s.cfg.Type, "user", u.Name)
		to += "?removed=1"
	}
	sessionauth.SeeOther(w, to)
}

// beginPasskeyLogin is POST /_backupweb/passkey-login/begin: a
// passkey-only sign-in from the login page. The login form's CSRF token
// comes in X-CSRF-Token.
func (s *Step) beginPasskeyLogin(w http.ResponseWriter, r *http.Request) {
	if !s.cfg.Guard.Manager().CheckFormToken(r, r.Header.Get(sessionauth.CSRFHeader)) {
		s.cfg.Audit.Refused(r, s.cfg.Type, auth.ReasonBadCSRF, "")
		s.cfg.Errs.Refuse(w, r, refusal.FormExpired)
		return
	}
	// An address past its begins, or blocked for its failures, begins
	// nothing: no ceremony is kept for it.
	if !s.mayBegin(w, r) {
		return
	}
	if err := s.cfg.Attempts.AdmitAddr(r); err != nil {
		s.cfg.Errs.Error(w, r, err)
		return
	}
	req, ok := s.readPasskeyRequest(w, r)
	if !ok {
		return
	}
	b, err := s.cfg.Passkeys.BeginDiscoverable(r.Context(), s.cfg.Guard.SafeNext(req.Next))
	s.writeBegun(w, r, b, err)
}

// finishPasskeyLogin is POST /_backupweb/passkey-login/finish: the
// browser's answer. It counts against the client address's failure limit,
// as a wrong password does; a right one starts a session (new id) for the
// passkey's user, who must still be in the user file, and answers
// {"next": ...}.
func (s *Step) finishPasskeyLogin(w http.ResponseWriter, r *http.Request) {
	if !s.cfg.Guard.Manager().CheckFormToken(r, r.Header.Get(sessionauth.CSRFHeader)) {
		s.cfg.Audit.Refused(r, s.cfg.Type, auth.ReasonBadCSRF, "")
		s.cfg.Errs.Refuse(w, r, refusal.FormExpired)
		return
	}
	req, ok := s.readPasskeyRequest(w, r)
	if !ok {
		return
	}
	v, err := s.counted(r, "", func(ctx context.Context) (passkey.Verdict, error) {
		return s.cfg.Passkeys.FinishDiscoverable(ctx, req.Ceremony, req.Credential)
	})
	if err != nil {
		s.cfg.Errs.Error(w, r, err)
		return
	}
	cred, known := s.cfg.Users.Cred(v.User)
	if !v.OK || !known {
		s.refusePasskey(w, r, v)
		return
	}
	attrs, ok, err := s.cfg.Users.Vouch(r.Context(), v.User)
	if err != nil {
		s.cfg.Errs.Error(w, r, err)
		return
	}
	if !ok {
		s.cfg.Audit.RefusedDetail(r, s.cfg.Type, auth.ReasonPasskeyRefused, "the passkey's user is not in the directory, or is disabled there", v.User)
		s.cfg.Errs.Refuse(w, r, refusal.PasskeyRefused)
		return
	}
	s.completePasskey(w, r, v.User, cred, v.Next, attrs)
}

// counted runs check, one attempt of user counted against the limits
// (the address's alone when user is ""): a "no" is a failure, a "yes"
// gives the slots back.
func (s *Step) counted(r *http.Request, user string, check func(context.Context) (passkey.Verdict, error)) (passkey.Verdict, error) {
	var v passkey.Verdict
	_, err := s.cfg.Attempts.Count(r, user, func(ctx context.Context) (bool, error) {
		var err error
		v, err = check(ctx)
		return v.OK, err
	})
	return v, err
}

// refusePasskey logs and answers a refused assertion: 401.
func (s *Step) refusePasskey(w http.ResponseWriter, r *http.Request, v passkey.Verdict) {
	reason, detail := auth.ReasonPasskeyRefused, v.Reason
	if v.Cloned {
		reason = auth.ReasonPasskeyCloned
	}
	if v.OK {
		detail = "the passkey's user is not in the user file"
	} else if v.Detail != "" {
		detail += ": " + v.Detail
	}
	s.cfg.Audit.RefusedDetail(r, s.cfg.Type, reason, detail, v.User)
	s.cfg.Errs.Refuse(w, r, refusal.PasskeyRefused)
}

// completePasskey starts the full session of user after a passkey
// completed their sign-in, with attrs besides the factor's (what Vouch
// gave), and answers {"next": next}.
func (s *Step) completePasskey(w http.ResponseWriter, r *http.Request, user, cred, next string, vouched map[string]string) {
	facts := map[string]string{AttrSecondFactor: SecondFactorPasskey}
	maps.Copy(facts, vouched)
	d := session.Data{Username: user, Cred: cred, Attrs: attrs.Of(facts)}
	if err := s.cfg.Guard.Begin(w, r, d); err != nil {
		s.cfg.Errs.Error(w, r, fmt.Errorf("starting the session: %w", err))
		return
	}
	s.cfg.Devices.Issue(w, r, user)
	s.cfg.Audit.SignedIn(r, s.cfg.Type, user)
	writeJSON(w, map[string]string{"next": s.cfg.Guard.SafeNext(next)})
}
