package oauth

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/refusal"
	"github.com/backupweb/backupweb/internal/session"
)

// backchannelTimeout bounds one back-channel logout: the key set fetched
// when the token's key is new, the single use, and ending the sessions.
const backchannelTimeout = 10 * time.Second

// maxBackchannelBody bounds what is read of a back-channel logout's body:
// one form field holding one token.
const maxBackchannelBody = maxLogoutToken + 1024

// backchannelLogout is POST /oauth/backchannel-logout, which the identity
// provider calls (OpenID Connect Back-Channel Logout 1.0) with the form
// field logout_token. The token is verified (verifyLogoutToken: signature
// by the provider's keys, iss, aud, iat, events, sub or sid, no nonce),
// its jti spent once for every instance, and then every session it names
// ends, in the store every instance reads: 200. Anything else ends
// nothing and answers 400 with {"error": ...} and a log line with the
// word auth: a refused token is an "auth refused" line, an outage (the
// store, discovery) an error line. It answers strangers, since the
// provider holds no session: the token's signature is the credential.
func (p *Provider) backchannelLogout(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	r.Body = http.MaxBytesReader(w, r.Body, maxBackchannelBody)
	if p.openID == nil {
		p.refuseLogout(w, r, errors.New("logout token refused: this service does not use OpenID Connect (set issuer)"))
		return
	}
	if err := r.ParseForm(); err != nil {
		p.refuseLogout(w, r, errors.New("logout token refused: the request is not a form of at most 16 KiB"))
		return
	}
	toks := r.PostForm["logout_token"]
	if len(toks) != 1 || toks[0] == "" {
		p.refuseLogout(w, r, errors.New("logout token refused: the form must hold exactly one logout_token"))
		return
	}
	disc, err := p.openID.get()
	if err != nil {
		p.failLogout(w, r, "discovery", err)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), backchannelTimeout)
	defer cancel()
	cl, err := disc.verifyLogoutToken(ctx, p.client, toks[0], p.now())
	if err != nil {
		p.refuseLogout(w, r, err)
		return
	}
	unused, err := p.spend(ctx, "oidc-logout", cl.Issuer+"\x00"+cl.JTI, logoutJTITTL)
	if err != nil {
		p.failLogout(w, r, "marking the logout token used", err)
		return
	}
	if !unused {
		p.refuseLogout(w, r, errors.New("logout token refused: its jti was used already (a replay)"))
		return
	}
	n, err := p.Manager().EndMatching(ctx, func(d session.Data) bool { return cl.matches(p.cfg.Provider, d) })
	if err != nil {
		p.failLogout(w, r, "ending the sessions", err)
		return
	}
	attrs := []slog.Attr{slog.String("auth_type", Name), slog.String("provider", p.cfg.Provider), slog.Int("sessions", n)}
	if cl.SessionID != "" {
		attrs = append(attrs, slog.Bool("by_sid", true))
	}
	p.log.LogAttrs(r.Context(), slog.LevelInfo, "auth signed out by the identity provider", attrs...)
	w.WriteHeader(http.StatusOK)
}

// refuseLogout answers a back-channel logout whose token is refused: the
// "auth refused" line, with why as its detail, and 400 {"error": why}.
// why never holds the token.
func (p *Provider) refuseLogout(w http.ResponseWriter, r *http.Request, why error) {
	msg := truncate(why.Error(), 300)
	p.audit.RefusedDetail(r, Name, auth.ReasonLogoutToken, msg, "")
	p.logoutErrs.Refuse(w, r, refusal.OAuthLogoutToken, strings.TrimPrefix(msg, "logout token refused: "))
}

// failLogout answers a back-channel logout that could not be applied
// (the store or the provider did not answer): an error line with the
// word auth, and 400 {"error": ...}, which the provider may retry.
func (p *Provider) failLogout(w http.ResponseWriter, r *http.Request, step string, err error) {
	p.log.LogAttrs(r.Context(), slog.LevelError, "auth: a back-channel logout could not be applied; no session ended",
		slog.String("auth_type", Name), slog.String("provider", p.cfg.Provider),
		slog.String("step", step), slog.String("err", truncate(err.Error(), 500)))
	p.logoutErrs.Refuse(w, r, refusal.OAuthLogoutToken, "it could not be applied now ("+step+"); try again")
}
