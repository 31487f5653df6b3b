// Package oidctest runs a real, certified OpenID Provider in process for
// tests: zitadel's op package with its example storage and login page,
// served by an httptest server on loopback. Tests drive the whole
// authorization code flow against it (discovery, the provider's login form,
// the token and user-information endpoints, signed ID tokens) without any
// network access.
//
// It adds only what the example cannot express: users whose e-mail is
// unverified (said explicitly, as email_verified false) or missing, users
// with claims of their own (groups, hd), clients
// that get the e-mail claims inside the ID token (as Google does) rather
// than only from the user-information endpoint, a switch that makes the next
// authorization end with an error sent back to the client, and counters of
// token requests. The protocol itself is the provider's own code.
//
// It is meant for tests only and deliberately offers no way to run outside
// one.
package oidctest

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/zitadel/oidc/v3/example/server/exampleop"
	"github.com/zitadel/oidc/v3/example/server/storage"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// User is an account of the test provider.
type User struct {
	// Username and Password are what the login form takes.
	Username, Password string
	// Email is the account's e-mail address; empty for an account without
	// one, which the provider then leaves out of its claims.
	Email string
	// EmailVerified tells whether the provider vouches for Email. When it is
	// false and Email is set, the claims say "email_verified": false.
	EmailVerified bool
	// FirstName and LastName make the "name" claim.
	FirstName, LastName string
	// Claims are further claims of the account (a groups claim, Google's
	// hd), given by the user-information endpoint and, for clients
	// registered with ClaimsInIDToken, in the ID token too, as the
	// provider's own claims are.
	Claims map[string]any
}

// Client is an OAuth client (relying party) registered with the provider.
type Client struct {
	// ID and Secret are the client credentials.
	ID, Secret string
	// RedirectURIs are the registered callback addresses; the provider
	// refuses any other.
	RedirectURIs []string
	// ClaimsInIDToken puts the profile and e-mail claims in the ID token,
	// as Google does; otherwise they come only from the user-information
	// endpoint, as the OpenID Connect specification prefers when an access
	// token is issued.
	ClaimsInIDToken bool
	// UserClaimsFromUserinfo keeps the users' own Claims out of the ID
	// token even with ClaimsInIDToken, as providers do that put groups in
	// the user-information answer only.
	UserClaimsFromUserinfo bool
	// PostLogoutRedirectURIs are the registered post_logout_redirect_uri
	// values: the provider's end_session_endpoint sends the browser back
	// only to one of them.
	PostLogoutRedirectURIs []string
}

// Options configure a Provider.
type Options struct {
	Users   []User
	Clients []Client
}

// Provider is a running OpenID Provider.
type Provider struct {
	// Issuer is the provider's issuer URL (http://127.0.0.1:port), also the
	// base of its discovery document.
	Issuer string

	server  *httptest.Server
	storage *store

	mu            sync.Mutex
	rejectNext    string
	tokenRequests int
	keyRequests   int
	sessions      map[string]Session // by sid
	lastSession   Session
}

// Session is one sign-in at the provider as an ID token tells it: the
// account's subject and the provider's session id (the sid claim, which
// every ID token carries), for the logout tokens a test makes.
type Session struct {
	Subject, SID, ClientID string
}

// issued records the session of an ID token the provider made.
func (p *Provider) issued(s Session) {
	p.mu.Lock()
	p.sessions[s.SID] = s
	p.lastSession = s
	p.mu.Unlock()
}

// LastSession returns the session of the last ID token the provider made.
func (p *Provider) LastSession() Session {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.lastSession
}

// EndSessionEndpoint is the provider's end_session_endpoint (RP-initiated
// logout), which its discovery document names.
func (p *Provider) EndSessionEndpoint() string {
	return p.Issuer + op.DefaultEndpoints.EndSession.Relative()
}

// Start runs a provider for the duration of the test t.
func Start(t testing.TB, o Options) *Provider {
	t.Helper()
	users := userStore{byID: map[string]*storage.User{}}
	for i, u := range o.Users {
		id := fmt.Sprintf("user%d", i+1)
		users.byID[id] = &storage.User{
			ID:            id,
			Username:      u.Username,
			Password:      u.Password,
			FirstName:     u.FirstName,
			LastName:      u.LastName,
			Email:         u.Email,
			EmailVerified: u.EmailVerified,
		}
	}
	clients := map[string]*storage.Client{}
	inIDToken, ownInIDToken := map[string]bool{}, map[string]bool{}
	postLogout := map[string][]string{}
	for _, c := range o.Clients {
		clients[c.ID] = storage.WebClient(c.ID, c.Secret, c.RedirectURIs...)
		inIDToken[c.ID] = c.ClaimsInIDToken
		ownInIDToken[c.ID] = c.ClaimsInIDToken && !c.UserClaimsFromUserinfo
		postLogout[c.ID] = c.PostLogoutRedirectURIs
	}
	extra := map[string]map[string]any{}
	for i, u := range o.Users {
		extra[fmt.Sprintf("user%d", i+1)] = u.Claims
	}
	p := &Provider{sessions: map[string]Session{}}
	st := &store{Storage: storage.NewStorageWithClients(users, clients), users: users, inIDToken: inIDToken, ownInIDToken: ownInIDToken,
		postLogout: postLogout, claims: extra, issued: p.issued}
	p.storage = st
	p.server = httptest.NewUnstartedServer(nil)
	p.Issuer = "http://" + p.server.Listener.Addr().String()
	router := exampleop.SetupServer(p.Issuer, st, slog.New(slog.DiscardHandler), false)
	p.server.Config.Handler = p.intercept(router)
	p.server.Start()
	t.Cleanup(p.server.Close)
	return p
}

// AuthorizationEndpoint is the provider's authorization endpoint.
func (p *Provider) AuthorizationEndpoint() string { return p.Issuer + "/auth" }

// TokenEndpoint is the provider's token endpoint.
func (p *Provider) TokenEndpoint() string {
	return p.Issuer + op.DefaultEndpoints.Token.Relative()
}

// UserinfoEndpoint is the provider's user-information endpoint.
func (p *Provider) UserinfoEndpoint() string {
	return p.Issuer + op.DefaultEndpoints.Userinfo.Relative()
}

// RejectNextAuthorization makes the next authorization request end without
// a login: the provider sends the browser back to the client with
// error=login_required (it is asked for prompt=none, so it may not show its
// login page), as a real provider does when the user cancels.
func (p *Provider) RejectNextAuthorization() {
	p.mu.Lock()
	p.rejectNext = "none"
	p.mu.Unlock()
}

// TokenRequests returns how many requests reached the token endpoint.
func (p *Provider) TokenRequests() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.tokenRequests
}

// KeySetRequests returns how many requests reached the key set (jwks_uri).
func (p *Provider) KeySetRequests() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.keyRequests
}

// intercept counts token and key set requests and applies
// RejectNextAuthorization.
func (p *Provider) intercept(next http.Handler) http.Handler {
	token, keys := op.DefaultEndpoints.Token.Relative(), op.DefaultEndpoints.JwksURI.Relative()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		switch r.URL.Path {
		case keys:
			p.keyRequests++
		case token:
			p.tokenRequests++
		case "/auth":
			if p.rejectNext != "" {
				q := r.URL.Query()
				q.Set("prompt", p.rejectNext)
				r.URL.RawQuery = q.Encode()
				p.rejectNext = ""
			}
		}
		p.mu.Unlock()
		next.ServeHTTP(w, r)
	})
}

// SubmitLogin fills in the provider's login form: page is the response
// whose request landed on the form (its URL carries the authorization
// request id). It posts the form with c, which follows the redirects that
// come back, and returns the last response.
func (p *Provider) SubmitLogin(c *http.Client, page *http.Response, username, password string) (*http.Response, error) {
	io.Copy(io.Discard, page.Body)
	page.Body.Close()
	id := page.Request.URL.Query().Get("authRequestID")
	if id == "" || !strings.HasPrefix(page.Request.URL.String(), p.Issuer+"/login/") {
		return nil, fmt.Errorf("oidctest: %s is not the provider's login page", page.Request.URL)
	}
	return c.PostForm(p.Issuer+"/login/username", url.Values{
		"id": {id}, "username": {username}, "password": {password},
	})
}
