package sessionauth

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/refusal"
	"github.com/backupweb/backupweb/internal/session"
	"github.com/backupweb/backupweb/internal/ui"
)

// The account page and the form that ends sessions, for every session
// type. A type adds its own parts with SetAccountExtra (flask-login: the
// machine tokens).
const (
	AccountPath      = "/_backupweb/account"
	AccountEndPath   = AccountPath + "/sessions/end"
	maxAccountBody   = 64 << 10
	msgAccountTitle  = "Your account"
	msgSessionsEnded = "The sessions you chose have ended."
)

// AccountExtra fills a type's own parts of the account page for u.
type AccountExtra func(r *http.Request, u auth.User, page *ui.AccountPage)

// SetAccountExtra makes fill add the type's own parts to every rendering
// of the account page. It must be called before the guard serves.
func (g *Guard) SetAccountExtra(fill AccountExtra) { g.accountExtra = fill }

// Routes is where MountAccount adds its routes: an *http.ServeMux, or
// anything that wraps one the same way.
type Routes interface {
	HandleFunc(pattern string, handler func(http.ResponseWriter, *http.Request))
}

// MountAccount adds the account page (GET AccountPath) and the form that
// ends sessions (POST AccountEndPath).
func (g *Guard) MountAccount(mux Routes) {
	if g.o.NoAccountPage {
		return
	}
	mux.HandleFunc("GET "+AccountPath, g.serveAccount)
	mux.HandleFunc("POST "+AccountEndPath, g.serveEndSessions)
}

// HasAccountPage reports whether MountAccount adds the account page
// (Options.NoAccountPage is not set).
func (g *Guard) HasAccountPage() bool { return !g.o.NoAccountPage }

// AccountLinks is the account page, for a user signed in with a session
// (auth.AccountLinker): the catalog page links to it.
func (g *Guard) AccountLinks(u auth.User) []auth.AccountLink {
	if !u.HasSession() || g.o.NoAccountPage {
		return nil
	}
	return []auth.AccountLink{{Label: msgAccountTitle, Path: AccountPath}}
}

// SignedIn returns the user r's session admits and the session, checking
// the CSRF token when token is not nil (a wrong one: 403). Only a session
// counts: a request with anything else (a machine token) is challenged.
// ok false: the answer is written.
func (g *Guard) SignedIn(w http.ResponseWriter, r *http.Request, token *string) (auth.User, *session.Session, bool) {
	u, ok, err := g.Identify(r)
	if err != nil {
		g.o.Errors.Error(w, r, err)
		return auth.User{}, nil, false
	}
	if !ok {
		g.Challenge(w, r)
		return auth.User{}, nil, false
	}
	s, ok, err := g.o.Manager.Load(r)
	if err != nil || !ok {
		if err == nil {
			err = errors.New("sessionauth: the session ended during the request")
		}
		g.o.Errors.Error(w, r, err)
		return auth.User{}, nil, false
	}
	if token != nil && !g.o.Manager.ValidCSRF(s, *token) {
		g.audit().Refused(r, g.o.Type, auth.ReasonBadCSRF, u.Name)
		g.o.Errors.Refuse(w, r, refusal.PageStale)
		return auth.User{}, nil, false
	}
	return u, s, true
}

// AccountForm reads a posted account form (at most 64 KiB) and checks its
// session and CSRF token; false: the answer is written. A request that
// carries an Authorization header is refused (403): only the user's own
// session manages the account.
func (g *Guard) AccountForm(w http.ResponseWriter, r *http.Request) (auth.User, *session.Session, bool) {
	if r.Header.Get("Authorization") != "" {
		g.o.Errors.Refuse(w, r, refusal.OutOfScope)
		return auth.User{}, nil, false
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxAccountBody)
	if err := r.ParseForm(); err != nil {
		g.o.Errors.Refuse(w, r, refusal.BadForm)
		return auth.User{}, nil, false
	}
	token := r.PostForm.Get("csrf_token")
	return g.SignedIn(w, r, &token)
}

// serveAccount is GET /_backupweb/account.
func (g *Guard) serveAccount(w http.ResponseWriter, r *http.Request) {
	u, s, ok := g.SignedIn(w, r, nil)
	if !ok {
		return
	}
	page := ui.AccountPage{}
	if r.URL.Query().Has("ended") {
		page.Notice = msgSessionsEnded
	}
	g.RenderAccount(w, r, u, s, http.StatusOK, page)
}

// RenderAccount fills page with u's sessions (and the type's own parts)
// and writes it with status.
func (g *Guard) RenderAccount(w http.ResponseWriter, r *http.Request, u auth.User, s *session.Session, status int, page ui.AccountPage) {
	list, err := g.o.Manager.Sessions(r.Context(), u.Name, r)
	if err != nil {
		g.o.Errors.Error(w, r, fmt.Errorf("sessionauth: listing the sessions of %s: %w", u.Name, err))
		return
	}
	token := g.o.Manager.CSRFToken(s)
	page.Brand, page.Title = ui.BrandOf(r.Context()), msgAccountTitle
	page.User = ui.Viewer{Name: u.Name, Type: u.Type, HasSession: true, CSRFToken: token}
	page.CSRFToken, page.EndURL = token, AccountEndPath
	for _, si := range list {
		page.Sessions = append(page.Sessions, ui.SessionRow{ID: si.ID, Client: si.Client, Agent: si.Agent, Created: si.Created, LastSeen: si.LastSeen, Current: si.Current})
	}
	if g.accountExtra != nil {
		g.accountExtra(r, u, &page)
	}
	w.Header().Set("Cache-Control", "no-store")
	if err := ui.Render(w, status, "account", page); err != nil {
		g.o.Logger.ErrorContext(r.Context(), "auth: rendering the account page", "auth_type", g.o.Type, "err", err)
	}
}

// serveEndSessions is POST /_backupweb/account/sessions/end: id ends one
// session of the user, others=1 every one but this.
func (g *Guard) serveEndSessions(w http.ResponseWriter, r *http.Request) {
	u, _, ok := g.AccountForm(w, r)
	if !ok {
		return
	}
	n, err := g.o.Manager.EndSessions(r.Context(), u.Name, r, r.PostForm["id"], r.PostForm.Get("others") == "1")
	if err != nil {
		g.o.Errors.Error(w, r, fmt.Errorf("sessionauth: ending sessions of %s: %w", u.Name, err))
		return
	}
	g.o.Logger.InfoContext(r.Context(), "auth sessions ended from the account page", "auth_type", g.o.Type, "user", u.Name, "sessions", n)
	http.Redirect(w, r, AccountPath+"?ended=1", http.StatusSeeOther)
}
