package oauth

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"golang.org/x/oauth2"

	"github.com/backupweb/backupweb/internal/attrs"
	"github.com/backupweb/backupweb/internal/exactjson"
	"github.com/backupweb/backupweb/internal/session"
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
	_, ambiguous := errors.AsType[*exactjson.Error](err)
	switch {
	case errors.Is(err, errIDToken) && !ambiguous:
		p.refuse(w, r, outIDToken, "", err)
		return
	case err != nil:
		p.providerFailure(w, r, "reading the account", err)
		return
	}
	if o, ok := p.checkEmail(id); !ok {
		p.refuse(w, r, o, id.Email, nil)
		return
	}
	groups, err := p.readGroups(ctx, r, tok, id)
	if err != nil {
		p.providerFailure(w, r, "reading the groups", err)
		return
	}
	acct := Account{Email: id.Email, Groups: groups}
	if p.kind.hostedDomain && checkHost(id.HostedDomain) == nil {
		// A hosted domain that is not a host name is no hosted domain.
		acct.HostedDomain = id.HostedDomain
	}
	if err := p.cfg.Rule.AdmitAccount(acct); err != nil {
		p.refuse(w, r, outNotAdmitted, id.Email, admissionDetail(p.cfg.Rule, acct))
		return
	}
	facts := map[string]string{
		"email":    id.Email,
		"name":     cleanName(id.Name),
		"provider": p.cfg.Provider,
	}
	if len(groups) > 0 {
		facts[groupsAttr] = encodeGroups(groups)
	}
	if acct.HostedDomain != "" {
		facts[hostedDomainAttr] = acct.HostedDomain
	}
	p.keepLogoutFacts(facts, id)
	d := session.Data{Username: id.Email, Attrs: attrs.Of(facts)}
	if err := p.Guard.Begin(w, r, d); err != nil {
		p.serverError(w, r, err)
		return
	}
	p.audit.SignedIn(r, Name, id.Email)
	http.Redirect(w, r, f.Next, http.StatusSeeOther)
}

// identify reads the signed-in account: from the verified ID token (and
// the user-information endpoint) with OpenID Connect, else from the
// provider's API.
func (p *Provider) identify(ctx context.Context, ep endpoints, tok *oauth2.Token, nonce string) (identity, error) {
	if ep.openID != nil {
		return ep.openID.identify(ctx, p.client, tok, nonce, p.cfg.ClientID, p.cfg.GroupsClaim)
	}
	return p.kind.profile(ctx, p.client, tok, ep.userinfo)
}

// checkEmail applies the e-mail rules before any group is read: an
// address must be given, and not marked unverified (and marked verified
// for providers that always say).
func (p *Provider) checkEmail(id identity) (outcome, bool) {
	switch {
	case id.Email == "":
		return outNoEmail, false
	case id.Verified == verifiedNo, p.kind.requireVerified && id.Verified != verifiedYes:
		return outUnverified, false
	}
	return outcome{}, true
}

// admissionDetail says, for the log, why the rule refused acct: a
// malformed address, or which facts no list admitted (the hosted domain
// when the rule needs one, the number of groups).
func admissionDetail(r Rule, a Account) error {
	if _, _, err := ParseEmail(a.Email); err != nil {
		return err
	}
	var parts []string
	if r.HostedDomain && len(r.Domains) > 0 {
		parts = append(parts, "hosted domain (hd) "+cmp.Or(printable(a.HostedDomain, 64), "none"))
	}
	if r.ByGroup() {
		parts = append(parts, fmt.Sprintf("%d groups from the provider, none listed", len(a.Groups)))
	}
	if len(parts) == 0 {
		return nil
	}
	return errors.New(strings.Join(parts, "; "))
}
