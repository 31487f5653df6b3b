package oidctest

import (
	"context"

	"github.com/zitadel/oidc/v3/example/server/storage"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// userStore is the example storage's user store over a fixed set of users.
type userStore struct {
	byID map[string]*storage.User
}

func (u userStore) GetUserByID(id string) *storage.User { return u.byID[id] }

func (u userStore) GetUserByUsername(name string) *storage.User {
	for _, user := range u.byID {
		if user.Username == name {
			return user
		}
	}
	return nil
}

func (u userStore) ExampleClientID() string { return storage.ServiceUserID }

// store wraps the example storage, overriding only how claims are filled in
// and which clients get them in the ID token.
type store struct {
	*storage.Storage
	users        userStore
	inIDToken    map[string]bool
	ownInIDToken map[string]bool           // users' own claims in the ID token
	postLogout   map[string][]string       // post_logout_redirect_uris by client
	claims       map[string]map[string]any // by subject
	issued       func(Session)             // told of each ID token's session
}

// GetClientByClientID returns the client, asking for the claims in the ID
// token when it was registered with ClaimsInIDToken, with its registered
// post-logout addresses.
func (s *store) GetClientByClientID(ctx context.Context, id string) (op.Client, error) {
	c, err := s.Storage.GetClientByClientID(ctx, id)
	if err != nil {
		return c, err
	}
	return client{Client: c, claims: s.inIDToken[id], postLogout: s.postLogout[id]}, nil
}

type client struct {
	op.Client
	claims     bool
	postLogout []string
}

func (c client) IDTokenUserinfoClaimsAssertion() bool { return c.claims }
func (c client) PostLogoutRedirectURIs() []string     { return c.postLogout }

// SetUserinfoFromRequest fills the ID token's claims.
func (s *store) SetUserinfoFromRequest(ctx context.Context, info *oidc.UserInfo, req op.IDTokenRequest, scopes []string) error {
	if err := s.Storage.SetUserinfoFromRequest(ctx, info, req, scopes); err != nil {
		return err
	}
	s.sayUnverified(info, req.GetSubject())
	if s.ownInIDToken[req.GetClientID()] {
		s.addClaims(info, req.GetSubject())
	}
	if a, ok := req.(interface{ GetID() string }); ok {
		// The provider's session of this sign-in: the authorization
		// request's id, as sid (OpenID Connect Back-Channel Logout 1.0,
		// section 2.1).
		sid := "sid-" + a.GetID()
		info.AppendClaims("sid", sid)
		s.issued(Session{Subject: req.GetSubject(), SID: sid, ClientID: req.GetClientID()})
	}
	return nil
}

// SetUserinfoFromToken fills the user-information endpoint's answer.
func (s *store) SetUserinfoFromToken(ctx context.Context, info *oidc.UserInfo, tokenID, subject, origin string) error {
	if err := s.Storage.SetUserinfoFromToken(ctx, info, tokenID, subject, origin); err != nil {
		return err
	}
	s.sayUnverified(info, subject)
	s.addClaims(info, subject)
	return nil
}

// addClaims adds the account's own claims (User.Claims).
func (s *store) addClaims(info *oidc.UserInfo, subject string) {
	for k, v := range s.claims[subject] {
		info.AppendClaims(k, v)
	}
}

// sayUnverified adds "email_verified": false for an unverified address:
// the example leaves a false flag out, which would make "unverified" look
// like "not said".
func (s *store) sayUnverified(info *oidc.UserInfo, subject string) {
	if u := s.users.GetUserByID(subject); u != nil && info.Email != "" && !u.EmailVerified {
		info.AppendClaims("email_verified", false)
	}
}
