package oauth

import (
	"context"
	"errors"
	"net/http"
	"time"

	"golang.org/x/oauth2"

	"github.com/backupweb/backupweb/session"
)

// callbackTimeout bounds a whole callback: the token exchange and every
// request made to read the account, each of which the HTTP client bounds
// too.
const callbackTimeout = 30 * time.Second

// callback is GET on the path of redirect_uri. In this order it checks the
// state against the browser's sealed cookie (single use; 400 when wrong),
// takes an error the identity provider sent back (401), redeems the code
// with the PKCE verifier, reads and verifies the account (502 when the
// provider fails or its ID token does not verify), applies the
// authorization rule to the e-mail (403), then starts a session with a
// fresh id and answers 303 to the local path the sign-in started from.
// The tokens live only for the duration of this call.
func (p *Provider) callback(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	q := r.URL.Query()
	f, err := p.takeFlow(w, r, q.Get("state"))
	if err != nil && !errors.Is(err, errState) {
		p.errs.Error(w, r, err)
		return
	}
	if err != nil {
		p.refuse(w, r, outBadState, "", nil)
		return
	}
	if e := q.Get("error"); e != "" {
		p.refuse(w, r, outDenied, "", errors.New("error="+printable(e, 64)))
		return
	}
	if iss := q.Get("iss"); iss != "" && p.cfg.OpenIDConnect() && iss != p.cfg.Issuer {
		p.refuse(w, r, outBadState, "", errors.New("the callback names another issuer"))
		return
	}
	code := q.Get("code")
	if code == "" {
		p.refuse(w, r, outBadCallback, "", nil)
		return
	}
	ep, err := p.endpoints()
	if err != nil {
		p.providerFailure(w, r, "discovery", err)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), callbackTimeout)
	defer cancel()
	ctx = context.WithValue(ctx, oauth2.HTTPClient, p.client)
	tok, err := p.oauth2Config(ep).Exchange(ctx, code, oauth2.VerifierOption(f.Verifier))
	if err != nil {
		p.providerFailure(w, r, "redeeming the authorization code", err)
		return
	}
	id, err := p.identify(ctx, ep, tok, f.Nonce)
	switch {
	case errors.Is(err, errIDToken):
		p.refuse(w, r, outIDToken, "", err)
		return
	case err != nil:
		p.providerFailure(w, r, "reading the account", err)
		return
	}
	if o, ok := p.check(id); !ok {
		p.refuse(w, r, o, id.Email, nil)
		return
	}
	d := session.Data{Username: id.Email, Attrs: map[string]string{
		"email":    id.Email,
		"name":     cleanName(id.Name),
		"provider": p.cfg.Provider,
	}}
	if err := p.Guard.Begin(w, r, d); err != nil {
		p.serverError(w, r, err)
		return
	}
	p.audit.With("provider", p.cfg.Provider).SignedIn(r, Name, id.Email)
	http.Redirect(w, r, f.Next, http.StatusSeeOther)
}

// identify reads the signed-in account: from the verified ID token (and
// the user-information endpoint) with OpenID Connect, else from the
// provider's API.
func (p *Provider) identify(ctx context.Context, ep endpoints, tok *oauth2.Token, nonce string) (identity, error) {
	if ep.openID != nil {
		return ep.openID.identify(ctx, p.client, tok, nonce, p.cfg.ClientID)
	}
	return p.kind.profile(ctx, p.client, tok, ep.userinfo)
}

// check applies the e-mail rules: an address must be given, not marked
// unverified (and marked verified for providers that always say), and
// admitted by the authorization rule.
func (p *Provider) check(id identity) (outcome, bool) {
	switch {
	case id.Email == "":
		return outNoEmail, false
	case id.Verified == verifiedNo, p.kind.requireVerified && id.Verified != verifiedYes:
		return outUnverified, false
	case p.cfg.Rule.Admit(id.Email) != nil:
		return outNotAdmitted, false
	}
	return outcome{}, true
}
