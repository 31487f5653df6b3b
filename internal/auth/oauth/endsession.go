package oauth

import (
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/backupweb/backupweb/internal/session"
)

// The session attributes kept for the identity provider's logout. They
// live in the session's server-side record only (Identify keeps them out
// of the user record).
const (
	// idTokenAttr holds the verified ID token, sent back as id_token_hint
	// by RP-initiated logout.
	idTokenAttr = "oidc_id_token"
	// issuerAttr, subjectAttr and sessionIDAttr hold the ID token's iss,
	// sub and sid, which a logout token names.
	issuerAttr    = "oidc_iss"
	subjectAttr   = "oidc_sub"
	sessionIDAttr = "oidc_sid"
)

// storeOnlyAttrs are the attributes above and the groups (moved to
// auth.User.Groups), which never reach the user record.
var storeOnlyAttrs = []string{groupsAttr, idTokenAttr, issuerAttr, subjectAttr, sessionIDAttr}

// maxKeptIDToken bounds the ID token kept with a session; a larger one is
// not kept, and sign-out then sends no id_token_hint (which the
// specification recommends, not requires).
const maxKeptIDToken = 8 << 10

// keepLogoutFacts records in facts (a session's attributes to be) what the identity provider's logout needs
// of the verified account id: the ID token (for the hint), its issuer,
// subject and session id (which a logout token names). Nothing without
// OpenID Connect.
func (p *Provider) keepLogoutFacts(facts map[string]string, id identity) {
	if id.IDToken == "" {
		return
	}
	if len(id.IDToken) <= maxKeptIDToken {
		facts[idTokenAttr] = id.IDToken
	}
	facts[issuerAttr] = p.cfg.Issuer
	facts[subjectAttr] = id.Subject
	if id.SessionID != "" {
		facts[sessionIDAttr] = id.SessionID
	}
}

// endSessionURL is where sign-out sends the browser once the local session
// d has ended (sessionauth.Options.SignedOut): the identity provider's
// end_session_endpoint with id_token_hint (the ID token kept with the
// session), client_id and post_logout_redirect_uri, so that the
// provider's session ends too and the next sign-in asks again. "" when the
// provider has no such endpoint (GitHub, plain OAuth 2.0, an OpenID
// provider that publishes none) or discovery fails: the local sign-out
// then leads to the signed-out page, as before.
func (p *Provider) endSessionURL(r *http.Request, d session.Data) string {
	ep := p.cfg.EndSessionURL
	if p.openID != nil {
		disc, err := p.openID.get()
		if err != nil {
			p.log.LogAttrs(r.Context(), slog.LevelWarn, "oauth: signed out here only: the identity provider's sign-out address is unknown",
				slog.String("auth_type", Name), slog.String("provider", p.cfg.Provider), slog.String("err", truncate(err.Error(), 500)))
			return ""
		}
		ep = disc.endSession
	}
	if ep == "" {
		return ""
	}
	u, err := url.Parse(ep)
	if err != nil || checkEndpoint(ep) != nil {
		// Never a redirect to what is not a plain web address.
		p.log.LogAttrs(r.Context(), slog.LevelWarn, "oauth: signed out here only: the identity provider's end_session_endpoint is not an absolute http(s) URL",
			slog.String("auth_type", Name), slog.String("provider", p.cfg.Provider))
		return ""
	}
	if !slices.Contains(p.FormTargets(), origin(u)) {
		// The pages' form-action would stop the browser on its way.
		p.log.LogAttrs(r.Context(), slog.LevelWarn, "oauth: signed out here only: the identity provider's end_session_endpoint is on another site than its issuer; set end_session_endpoint (provider generic) to an address on the issuer's site",
			slog.String("auth_type", Name), slog.String("provider", p.cfg.Provider), slog.String("end_session_endpoint", origin(u)))
		return ""
	}
	q := u.Query()
	if tok := d.Attrs.Get(idTokenAttr); tok != "" {
		q.Set("id_token_hint", tok)
	}
	q.Set("client_id", p.cfg.ClientID)
	if post := p.cfg.postLogoutURL(); post != "" {
		q.Set("post_logout_redirect_uri", post)
	}
	u.RawQuery = q.Encode()
	u.Fragment = ""
	return u.String()
}

// FormTargets returns the origin the sign-out form leads on to
// (auth.FormTargeter): that of end_session_endpoint when it is
// configured, else the issuer's, where OpenID providers serve it; none
// without either. The pages' Content-Security-Policy names it in
// form-action, which browsers apply to the sign-out's redirect.
func (p *Provider) FormTargets() []string {
	raw := p.cfg.EndSessionURL
	if raw == "" && p.openID != nil {
		raw = p.cfg.Issuer
	}
	u, err := url.Parse(raw)
	if raw == "" || err != nil {
		return nil
	}
	o := origin(u)
	// Only what a policy can hold as a source: scheme, host and port.
	if strings.ContainsFunc(o[len(u.Scheme)+3:], func(r rune) bool {
		return !(r == '.' || r == '-' || r == ':' || r == '[' || r == ']' || '0' <= r && r <= '9' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z')
	}) {
		return nil
	}
	return []string{o}
}

// origin is u's scheme, host and port, as a policy names a source.
func origin(u *url.URL) string { return strings.ToLower(u.Scheme + "://" + u.Host) }
