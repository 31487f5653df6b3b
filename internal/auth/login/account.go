package login

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/auth/secondfactor"
	"github.com/backupweb/backupweb/internal/auth/sessionauth"
	"github.com/backupweb/backupweb/internal/tokens"
	"github.com/backupweb/backupweb/internal/ui"
)

// The account page (package sessionauth: the sessions) and the forms of
// its machine tokens. Each form posts csrf_token, and only a session
// (never a machine token) can use them.
const (
	AccountPath       = sessionauth.AccountPath
	AccountTokensPath = AccountPath + "/tokens"
	AccountRevokePath = AccountPath + "/tokens/revoke"
	msgTokenRevoked   = "The token is revoked."
	// msgTokensUnreadable replaces the list when the store did not answer.
	msgTokensUnreadable = "Your tokens cannot be listed right now; try again in a moment."
	msgTokenMade        = "The token is made."
	msgWrongPassword    = "The password is not right; no token was made."
	msgBadTokenRequest  = "The token could not be made: "
)

// mountAccount adds the account page and its forms.
func (p *Provider) mountAccount(mux sessionauth.Routes) {
	if !p.HasAccountPage() {
		return
	}
	p.MountAccount(mux)
	mux.HandleFunc("POST "+AccountTokensPath, p.serveCreateToken)
	mux.HandleFunc("POST "+AccountRevokePath, p.serveRevokeToken)
}

// fillAccount adds the user's tokens, the token forms and the link to the
// passkeys page to the account page (sessionauth.AccountExtra).
func (p *Provider) fillAccount(r *http.Request, u auth.User, page *ui.AccountPage) {
	page.Tokens, page.CreateURL, page.RevokeURL = true, AccountTokensPath, AccountRevokePath
	if p.step.PasskeysOffered() {
		page.FactorsURL = secondfactor.PasskeysPath
	}
	if r.URL.Query().Has("revoked") {
		page.Notice = msgTokenRevoked
	}
	list, err := p.state.TokensOf(r.Context(), u.Name)
	if err != nil {
		p.log.ErrorContext(r.Context(), "auth: listing a user's tokens failed", "auth_type", Name, "user", u.Name, "err", err)
		page.Notice = msgTokensUnreadable
	}
	for _, t := range list {
		page.TokenRows = append(page.TokenRows, ui.TokenRow{ID: t.ID, Label: t.Label, Scope: scopeText(t.Scope()), Created: t.Created, Expires: t.Expires, LastUsed: t.LastUsed})
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

// serveRevokeToken is POST /_backupweb/account/tokens/revoke: id revokes
// one of the user's own tokens.
func (p *Provider) serveRevokeToken(w http.ResponseWriter, r *http.Request) {
	u, _, ok := p.AccountForm(w, r)
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

// tokenRequest reads the create form's label, lifetime and path; problem
// says what is wrong with them, "" when nothing is.
func tokenRequest(f map[string][]string) (label, path string, lifetime time.Duration, problem string) {
	get := func(k string) string {
		if v := f[k]; len(v) > 0 {
			return strings.TrimSpace(v[0])
		}
		return ""
	}
	label, path = get("label"), get("path")
	if e := get("expires"); e != "" {
		d, err := tokens.ParseDuration(e)
		if err != nil {
			return "", "", 0, "the lifetime is not a duration"
		}
		lifetime = d
	}
	switch {
	case tokens.CheckLabel(label) != nil:
		problem = tokens.CheckLabel(label).Error()
	case path != "" && tokens.CheckPath(path) != nil:
		problem = tokens.CheckPath(path).Error()
	}
	return label, path, lifetime, problem
}

// serveCreateToken is POST /_backupweb/account/tokens: the password given
// again (checked and throttled exactly like a sign-in), a label, a
// lifetime, read_only and path; the new token is shown once, on the page
// this answers with.
func (p *Provider) serveCreateToken(w http.ResponseWriter, r *http.Request) {
	u, s, ok := p.AccountForm(w, r)
	if !ok {
		return
	}
	label, path, lifetime, problem := tokenRequest(r.PostForm)
	if problem != "" {
		p.RenderAccount(w, r, u, s, http.StatusBadRequest, ui.AccountPage{Error: msgBadTokenRequest + problem + "."})
		return
	}
	pw := r.PostForm.Get("password")
	_, right, err := countAttempt(p, r, p.limitsFor(r, u.Name), u.Name, func(ctx context.Context) (bool, bool, error) {
		v, ok, err := p.check(ctx, u.Name, pw)
		// The password is right for this very user: the directory's
		// spelling of the name is the session's.
		return ok, ok && v.name == u.Name, err
	})
	if err != nil {
		p.errs.Error(w, r, err)
		return
	}
	if !right {
		p.audit.Refused(r, Name, auth.ReasonBadCredentials, u.Name)
		p.RenderAccount(w, r, u, s, http.StatusUnauthorized, ui.AccountPage{Error: msgWrongPassword})
		return
	}
	secret, _, err := p.CreateToken(u.Name, label, lifetime, tokens.Scope{ReadOnly: r.PostForm.Get("read_only") == "1", Path: path}, "account page")
	if err != nil {
		p.errs.Error(w, r, fmt.Errorf("login: making a token for %s: %w", u.Name, err))
		return
	}
	p.RenderAccount(w, r, u, s, http.StatusOK, ui.AccountPage{Notice: msgTokenMade, NewToken: secret})
}
