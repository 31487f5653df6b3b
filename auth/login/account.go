package login

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/backupweb/backupweb/auth"
	"github.com/backupweb/backupweb/internal/ui"
	"github.com/backupweb/backupweb/session"
	"github.com/backupweb/backupweb/tokens"
)

// The account page and its forms. Each form posts csrf_token, and only a
// session (never a machine token) can use them.
const (
	AccountPath        = "/_backupweb/account"
	AccountEndPath     = AccountPath + "/sessions/end"
	AccountTokensPath  = AccountPath + "/tokens"
	AccountRevokePath  = AccountPath + "/tokens/revoke"
	maxAccountBody     = 64 << 10
	maxTokenLabel      = 80
	msgAccountTitle    = "Your account"
	msgSessionsEnded   = "The sessions you chose have ended."
	msgTokenRevoked    = "The token is revoked."
	msgTokenMade       = "The token is made."
	msgWrongPassword   = "The password is not right; no token was made."
	msgBadTokenRequest = "The token could not be made: "
)

// mountAccount adds the account page and its forms.
func (p *Provider) mountAccount(mux *http.ServeMux) {
	mux.HandleFunc("GET "+AccountPath, p.serveAccount)
	mux.HandleFunc("POST "+AccountEndPath, p.serveEndSessions)
	mux.HandleFunc("POST "+AccountTokensPath, p.serveCreateToken)
	mux.HandleFunc("POST "+AccountRevokePath, p.serveRevokeToken)
}

// serveAccount is GET /_backupweb/account: the user's sessions and tokens.
func (p *Provider) serveAccount(w http.ResponseWriter, r *http.Request) {
	u, s, ok := p.signedIn(w, r, nil)
	if !ok {
		return
	}
	page := ui.AccountPage{}
	switch q := r.URL.Query(); {
	case q.Has("ended"):
		page.Notice = msgSessionsEnded
	case q.Has("revoked"):
		page.Notice = msgTokenRevoked
	}
	p.renderAccount(w, r, u, s, http.StatusOK, page)
}

// renderAccount fills page with the user's sessions and tokens and writes
// it with status.
func (p *Provider) renderAccount(w http.ResponseWriter, r *http.Request, u auth.User, s *session.Session, status int, page ui.AccountPage) {
	list, err := p.Manager().Sessions(r.Context(), u.Name, r)
	if err != nil {
		p.errs.Error(w, r, fmt.Errorf("login: listing the sessions of %s: %w", u.Name, err))
		return
	}
	token := p.Manager().CSRFToken(s)
	page.Brand, page.Title = ui.BrandOf(r.Context()), msgAccountTitle
	page.User = ui.Viewer{Name: u.Name, Type: u.Type, HasSession: true, CSRFToken: token}
	page.CSRFToken, page.EndURL = token, AccountEndPath
	page.Tokens, page.CreateURL, page.RevokeURL = true, AccountTokensPath, AccountRevokePath
	if p.passkeys != nil {
		page.FactorsURL = PasskeysPath
	}
	for _, si := range list {
		page.Sessions = append(page.Sessions, ui.SessionRow{ID: si.ID, Client: si.Client, Agent: si.Agent, Created: si.Created, LastSeen: si.LastSeen, Current: si.Current})
	}
	for _, t := range p.tokens.Of(u.Name) {
		page.TokenRows = append(page.TokenRows, ui.TokenRow{ID: t.ID, Label: t.Label, Scope: scopeText(t.Scope()), Created: t.Created, Expires: t.Expires, LastUsed: t.LastUsed})
	}
	w.Header().Set("Cache-Control", "no-store")
	if err := ui.Render(w, status, "account", page); err != nil {
		p.log.ErrorContext(r.Context(), "auth: rendering the account page", "auth_type", Name, "err", err)
	}
}

// scopeText says what a token may do, for people.
func scopeText(s tokens.Scope) string {
	var parts []string
	if s.ReadOnly {
		parts = append(parts, "read only")
	}
	if s.Path != "" {
		parts = append(parts, "under "+s.Path)
	}
	if len(parts) == 0 {
		return "full access"
	}
	return strings.Join(parts, ", ")
}

// accountForm reads a posted account form and checks its session and
// CSRF token; false: the answer is written.
func (p *Provider) accountForm(w http.ResponseWriter, r *http.Request) (auth.User, *session.Session, bool) {
	if _, bearer := bearerToken(r); bearer {
		// A token manages nothing: only the user's own session does.
		p.errs.Refuse(w, r, auth.OutOfScope)
		return auth.User{}, nil, false
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxAccountBody)
	if err := r.ParseForm(); err != nil {
		p.errs.Refuse(w, r, auth.BadForm)
		return auth.User{}, nil, false
	}
	token := r.PostForm.Get("csrf_token")
	return p.signedIn(w, r, &token)
}

// serveEndSessions is POST /_backupweb/account/sessions/end: id ends one
// session of the user, others=1 every one but this.
func (p *Provider) serveEndSessions(w http.ResponseWriter, r *http.Request) {
	u, _, ok := p.accountForm(w, r)
	if !ok {
		return
	}
	n, err := p.Manager().EndSessions(r.Context(), u.Name, r, r.PostForm["id"], r.PostForm.Get("others") == "1")
	if err != nil {
		p.errs.Error(w, r, fmt.Errorf("login: ending sessions of %s: %w", u.Name, err))
		return
	}
	p.log.InfoContext(r.Context(), "auth sessions ended from the account page", "auth_type", Name, "user", u.Name, "sessions", n)
	http.Redirect(w, r, AccountPath+"?ended=1", http.StatusSeeOther)
}

// serveRevokeToken is POST /_backupweb/account/tokens/revoke: id revokes
// one of the user's own tokens.
func (p *Provider) serveRevokeToken(w http.ResponseWriter, r *http.Request) {
	u, _, ok := p.accountForm(w, r)
	if !ok {
		return
	}
	err := p.RevokeToken(r.Context(), u.Name, r.PostForm.Get("id"), "account page")
	if err != nil && !errors.Is(err, tokens.ErrNoToken) {
		p.errs.Error(w, r, fmt.Errorf("login: revoking a token of %s: %w", u.Name, err))
		return
	}
	http.Redirect(w, r, AccountPath+"?revoked=1", http.StatusSeeOther)
}

// serveCreateToken is POST /_backupweb/account/tokens: the password given
// again (checked and throttled exactly like a sign-in), a label, a
// lifetime, read_only and path; the new token is shown once, on the page
// this answers with.
func (p *Provider) serveCreateToken(w http.ResponseWriter, r *http.Request) {
	u, s, ok := p.accountForm(w, r)
	if !ok {
		return
	}
	f := r.PostForm
	label, path := strings.TrimSpace(f.Get("label")), strings.TrimSpace(f.Get("path"))
	var lifetime time.Duration
	var problem string
	if e := f.Get("expires"); e != "" {
		d, err := tokens.ParseDuration(e)
		if err != nil {
			problem = "the lifetime is not a duration"
		}
		lifetime = d
	}
	switch {
	case len(label) > maxTokenLabel || strings.ContainsFunc(label, func(c rune) bool { return c < 0x20 || c == 0x7f }):
		problem = "the label is too long or holds control characters"
	case path != "" && (!strings.HasPrefix(path, "/") || len(path) > 200):
		problem = "the path must start with / (at most 200 characters)"
	}
	if problem != "" {
		p.renderAccount(w, r, u, s, http.StatusBadRequest, ui.AccountPage{Error: msgBadTokenRequest + problem + "."})
		return
	}
	pw := f.Get("password")
	_, right, err := countAttempt(p, r, p.limitsFor(r, u.Name), u.Name, func(ctx context.Context) (string, bool, error) {
		return p.check(ctx, u.Name, pw)
	})
	if err != nil {
		p.errs.Error(w, r, err)
		return
	}
	if !right {
		p.audit.Refused(r, Name, auth.ReasonBadCredentials, u.Name)
		p.renderAccount(w, r, u, s, http.StatusUnauthorized, ui.AccountPage{Error: msgWrongPassword})
		return
	}
	secret, _, err := p.CreateToken(u.Name, label, lifetime, tokens.Scope{ReadOnly: f.Get("read_only") == "1", Path: path}, "account page")
	if err != nil {
		p.errs.Error(w, r, fmt.Errorf("login: making a token for %s: %w", u.Name, err))
		return
	}
	p.renderAccount(w, r, u, s, http.StatusOK, ui.AccountPage{Notice: msgTokenMade, NewToken: secret})
}
