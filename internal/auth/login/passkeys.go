package login

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/backupweb/backupweb/internal/attrs"
	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/auth/passwordauth"
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

// openPasskeys makes the passkey service, passkeys in the factors file,
// bound to [server] public_url. Ceremonies are kept apart from the other
// single-use tokens: with a shared store, in it (begun on one instance,
// finished on any) and spent as a kind of their own; otherwise in this
// process's memory, in passkey's own bounded tables, since a ceremony
// outlives no restart worth keeping it for.
func (p *Provider) openPasskeys(deps auth.Deps) (*passkey.Service, error) {
	key, err := p.Manager().PurposeKey("webauthn-ceremony")
	if err != nil {
		return nil, err
	}
	var store session.Store = session.NewMemoryStore(deps.Clock())
	var spend func(ctx context.Context, key string, ttl time.Duration) (bool, error)
	if deps.Shared != nil {
		store = p.Guard.Store()
		spend = func(ctx context.Context, key string, ttl time.Duration) (bool, error) {
			return deps.Shared.SpendOnce(ctx, spendCeremony, key, ttl)
		}
	}
	cs, err := passkey.NewCeremonies(store, key, spend, deps.Clock())
	if err != nil {
		return nil, err
	}
	if prev, ok, err := p.Manager().PreviousPurposeKey("webauthn-ceremony"); err != nil {
		return nil, err
	} else if ok {
		if err := cs.AcceptPrevious(prev); err != nil {
			return nil, err
		}
	}
	return passkey.New(passkey.Options{
		PublicURL: deps.PublicURL, Name: "backupweb",
		Keys: passkey.NewStateKeys(p.state), Ceremonies: cs, Now: deps.Clock(),
	})
}

// AccountLinks are the account page and, when passkeys are offered, the
// passkeys page, for a user signed in with a session
// (auth.AccountLinker): the catalog page links to them.
func (p *Provider) AccountLinks(u auth.User) []auth.AccountLink {
	if !u.HasSession() {
		return nil
	}
	links := p.Guard.AccountLinks(u)
	if p.passkeys != nil && p.factorsOn() {
		links = append(links, auth.AccountLink{Label: msgPasskeysTitle, Path: PasskeysPath})
	}
	return links
}

// spendCeremony is the kind of single-use token a passkey ceremony's store
// key is spent as (auth.Shared.SpendOnce).
const spendCeremony = "webauthn-ceremony"

// mountPasskeys adds the passkey routes, when passkeys are in use.
func (p *Provider) mountPasskeys(mux sessionauth.Routes) {
	if p.passkeys == nil {
		return
	}
	mux.HandleFunc("GET "+PasskeysPath, p.servePasskeys)
	mux.HandleFunc("POST "+PasskeysBeginPath, p.beginRegistration)
	mux.HandleFunc("POST "+PasskeysFinishPath, p.finishRegistration)
	mux.HandleFunc("POST "+PasskeysRemovePath, p.removePasskey)
	p.mountPasskeySteps(mux)
	if p.cfg.PasskeyLogin {
		mux.HandleFunc("POST "+PasskeyLoginBegin, p.beginPasskeyLogin)
		mux.HandleFunc("POST "+PasskeyLoginFinish, p.finishPasskeyLogin)
	}
}

// loginButton is the "Sign in with a passkey" button of the login page,
// when passkey_login is on.
func (p *Provider) loginButton(next string) ui.PasskeyButton {
	if p.passkeys == nil || !p.cfg.PasskeyLogin || !p.factorsOn() {
		return ui.PasskeyButton{}
	}
	return ui.PasskeyButton{BeginURL: PasskeyLoginBegin, FinishURL: PasskeyLoginFinish, Next: next, Label: "Sign in with a passkey"}
}

// signedIn returns the signed-in user of r and their session, checking the
// CSRF token when token is not nil: a wrong one is a 403 written here.
// ok false: the response is written (a challenge, a refusal, an error).
func (p *Provider) signedIn(w http.ResponseWriter, r *http.Request, token *string) (auth.User, *session.Session, bool) {
	u, ok, err := p.Guard.Identify(r)
	if err != nil {
		p.errs.Error(w, r, err)
		return auth.User{}, nil, false
	}
	if !ok {
		p.Guard.Challenge(w, r)
		return auth.User{}, nil, false
	}
	s, ok, err := p.Manager().Load(r)
	if err != nil || !ok {
		p.errs.Error(w, r, cmpErr(err, errors.New("login: the session ended during the request")))
		return auth.User{}, nil, false
	}
	if token != nil && !p.Manager().ValidCSRF(s, *token) {
		p.audit.Refused(r, Name, auth.ReasonBadCSRF, u.Name)
		p.errs.Refuse(w, r, refusal.PageStale)
		return auth.User{}, nil, false
	}
	return u, s, true
}

// cmpErr returns err, or def when err is nil.
func cmpErr(err, def error) error {
	if err != nil {
		return err
	}
	return def
}

// servePasskeys is GET /_backupweb/passkeys: the user's passkeys, a form
// to add one and a button to remove each. Adding and removing need the
// password given again (RequirePassword): without it, the browser is
// asked for it first.
func (p *Provider) servePasskeys(w http.ResponseWriter, r *http.Request) {
	u, s, ok := p.signedIn(w, r, nil)
	if !ok || !p.RequirePassword(w, r, u, r.URL.RequestURI()) {
		return
	}
	keys, err := p.passkeys.Passkeys(r.Context(), u.Name)
	if err != nil {
		p.errs.Error(w, r, fmt.Errorf("login: listing the passkeys of %s: %w", u.Name, err))
		return
	}
	token := p.Manager().CSRFToken(s)
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
		p.log.ErrorContext(r.Context(), "auth: rendering the passkeys page", "auth_type", Name, "err", err)
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
func (p *Provider) readPasskeyRequest(w http.ResponseWriter, r *http.Request) (passkeyRequest, bool) {
	var req passkeyRequest
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxPasskeyBody))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			p.errs.Refuse(w, r, refusal.TooLarge)
			return req, false
		}
		p.errs.Refuse(w, r, refusal.BadRequest)
		return req, false
	}
	if err := exactjson.Decode(body, &req); err != nil {
		p.errs.Refuse(w, r, refusal.BadRequest)
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
func (p *Provider) writeBegun(w http.ResponseWriter, r *http.Request, b passkey.Begun, err error) {
	if err != nil {
		p.errs.Error(w, r, err)
		return
	}
	writeJSON(w, begunAnswer{Options: b.Options, Ceremony: b.ID})
}

// beginRegistration is POST /_backupweb/passkeys/begin: with the
// password given again (else 403), the registration options.
func (p *Provider) beginRegistration(w http.ResponseWriter, r *http.Request) {
	token := r.Header.Get(sessionauth.CSRFHeader)
	u, _, ok := p.signedIn(w, r, &token)
	if !ok || !p.RequirePassword(w, r, u, PasskeysPath) || !p.userMayBegin(w, r, u.Name) {
		return
	}
	b, err := p.passkeys.BeginRegistration(r.Context(), u.Name, false)
	p.writeBegun(w, r, b, err)
}

// finishRegistration is POST /_backupweb/passkeys/finish: with the
// password given again (else 403), the passkey is stored unless the
// user's factors changed since the begin (409: another enrolment finished
// first).
func (p *Provider) finishRegistration(w http.ResponseWriter, r *http.Request) {
	token := r.Header.Get(sessionauth.CSRFHeader)
	u, _, ok := p.signedIn(w, r, &token)
	if !ok || !p.RequirePassword(w, r, u, PasskeysPath) || !p.userMayBegin(w, r, u.Name) {
		return
	}
	req, ok := p.readPasskeyRequest(w, r)
	if !ok {
		return
	}
	name, ok := p.passkeyName(w, r, req.Name)
	if !ok {
		return
	}
	v, err := p.passkeys.FinishRegistration(r.Context(), u.Name, req.Ceremony, name, req.Credential)
	if errors.Is(err, passkey.ErrFactorsChanged) {
		p.log.WarnContext(r.Context(), "auth: a passkey registration was refused", "auth_type", Name,
			"user", u.Name, "client", peer.Of(r).String(), "reason", "factors changed meanwhile", "detail", "another second factor was added or removed since the registration began")
		p.errs.Refuse(w, r, refusal.FactorsChanged)
		return
	}
	if err != nil {
		p.errs.Error(w, r, err)
		return
	}
	if !v.OK {
		p.log.WarnContext(r.Context(), "auth: a passkey registration was refused", "auth_type", Name,
			"user", u.Name, "client", peer.Of(r).String(), "reason", v.Reason, "detail", v.Detail)
		p.errs.Refuse(w, r, refusal.PasskeyNotAdded)
		return
	}
	p.log.InfoContext(r.Context(), "auth: passkey added", "auth_type", Name, "user", u.Name, "name", name)
	writeJSON(w, map[string]bool{"ok": true})
}

// passkeyName checks the name given to a new passkey: trimmed, 1 to 64
// characters, printable; another is refused (400). ok false: it answered.
func (p *Provider) passkeyName(w http.ResponseWriter, r *http.Request, s string) (string, bool) {
	s = strings.TrimSpace(s)
	if s == "" || !utf8.ValidString(s) || utf8.RuneCountInString(s) > maxPasskeyNameRunes ||
		strings.ContainsFunc(s, func(r rune) bool { return !unicode.IsPrint(r) }) {
		p.errs.Refuse(w, r, refusal.PasskeyName)
		return "", false
	}
	return s, true
}

// removePasskey is POST /_backupweb/passkeys/remove, a form: csrf_token
// and id (the credential id, base64url). With the password given again,
// 303 back to the page; without, to the password page first
// (RequirePassword), nothing removed.
func (p *Provider) removePasskey(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	if err := r.ParseForm(); err != nil {
		p.errs.Refuse(w, r, refusal.BadForm)
		return
	}
	token := r.PostForm.Get("csrf_token")
	u, _, ok := p.signedIn(w, r, &token)
	if !ok || !p.RequirePassword(w, r, u, PasskeysPath) {
		return
	}
	id, err := base64.RawURLEncoding.DecodeString(r.PostForm.Get("id"))
	if err != nil || len(id) == 0 {
		p.errs.Refuse(w, r, refusal.BadForm)
		return
	}
	removed, err := p.passkeys.Remove(r.Context(), u.Name, id)
	if err != nil {
		p.errs.Error(w, r, fmt.Errorf("login: removing a passkey of %s: %w", u.Name, err))
		return
	}
	to := PasskeysPath
	if removed {
		p.log.InfoContext(r.Context(), "auth: passkey removed", "auth_type", Name, "user", u.Name)
		to += "?removed=1"
	}
	sessionauth.SeeOther(w, to)
}

// beginPasskeyLogin is POST /_backupweb/passkey-login/begin: a
// passkey-only sign-in from the login page. The login form's CSRF token
// comes in X-CSRF-Token.
func (p *Provider) beginPasskeyLogin(w http.ResponseWriter, r *http.Request) {
	if !p.Manager().CheckFormToken(r, r.Header.Get(sessionauth.CSRFHeader)) {
		p.audit.Refused(r, Name, auth.ReasonBadCSRF, "")
		p.errs.Refuse(w, r, refusal.FormExpired)
		return
	}
	// An address past its begins, or blocked for its failures, begins
	// nothing: no ceremony is kept for it.
	if !p.mayBegin(w, r) {
		return
	}
	addr := p.addrLimit(r)
	v, err := addr.c.Check(r.Context(), addr.key)
	if err == nil {
		err = passwordauth.Admit(p.audit, r, Name, v, addr.label, "")
	}
	if err != nil {
		p.errs.Error(w, r, err)
		return
	}
	req, ok := p.readPasskeyRequest(w, r)
	if !ok {
		return
	}
	b, err := p.passkeys.BeginDiscoverable(r.Context(), p.Guard.SafeNext(req.Next))
	p.writeBegun(w, r, b, err)
}

// finishPasskeyLogin is POST /_backupweb/passkey-login/finish: the
// browser's answer. It counts against the client address's failure limit,
// as a wrong password does; a right one starts a session (new id) for the
// passkey's user, who must still be in the user file, and answers
// {"next": ...}.
func (p *Provider) finishPasskeyLogin(w http.ResponseWriter, r *http.Request) {
	if !p.Manager().CheckFormToken(r, r.Header.Get(sessionauth.CSRFHeader)) {
		p.audit.Refused(r, Name, auth.ReasonBadCSRF, "")
		p.errs.Refuse(w, r, refusal.FormExpired)
		return
	}
	req, ok := p.readPasskeyRequest(w, r)
	if !ok {
		return
	}
	v, err := p.counted(r, []limit{p.addrLimit(r)}, "", func(ctx context.Context) (passkey.Verdict, error) {
		return p.passkeys.FinishDiscoverable(ctx, req.Ceremony, req.Credential)
	})
	if err != nil {
		p.errs.Error(w, r, err)
		return
	}
	cred, known := p.users.Load().cred(v.User)
	if !v.OK || !known {
		p.refusePasskey(w, r, v)
		return
	}
	p.completePasskey(w, r, v.User, cred, v.Next)
}

// counted runs check, one attempt counted against limits: a "no" is a
// failure, a "yes" gives the slots back.
func (p *Provider) counted(r *http.Request, limits []limit, logged string, check func(context.Context) (passkey.Verdict, error)) (passkey.Verdict, error) {
	v, _, err := countAttempt(p, r, limits, logged, func(ctx context.Context) (passkey.Verdict, bool, error) {
		v, err := check(ctx)
		return v, v.OK, err
	})
	return v, err
}

// refusePasskey logs and answers a refused assertion: 401.
func (p *Provider) refusePasskey(w http.ResponseWriter, r *http.Request, v passkey.Verdict) {
	reason, detail := auth.ReasonPasskeyRefused, v.Reason
	if v.Cloned {
		reason = auth.ReasonPasskeyCloned
	}
	if v.OK {
		detail = "the passkey's user is not in the user file"
	} else if v.Detail != "" {
		detail += ": " + v.Detail
	}
	p.audit.RefusedDetail(r, Name, reason, detail, v.User)
	p.errs.Refuse(w, r, refusal.PasskeyRefused)
}

// completePasskey starts the full session of user after a passkey
// completed their sign-in, and answers {"next": next}.
func (p *Provider) completePasskey(w http.ResponseWriter, r *http.Request, user, cred, next string) {
	d := session.Data{Username: user, Cred: cred, Attrs: attrs.Map{}.With(AttrSecondFactor, SecondFactorPasskey)}
	if err := p.Guard.Begin(w, r, d); err != nil {
		p.errs.Error(w, r, fmt.Errorf("starting the session: %w", err))
		return
	}
	p.issueDevice(w, r, user)
	p.audit.SignedIn(r, Name, user)
	writeJSON(w, map[string]string{"next": p.Guard.SafeNext(next)})
}
