package oauth

import (
	"errors"
	"log/slog"
	"net/http"
	"strings"

	"golang.org/x/oauth2"

	"github.com/backupweb/backupweb/auth"
	"github.com/backupweb/backupweb/ui"
)

// outcome is how a failed sign-in is answered: the status, the page a
// person sees, and the reason logged. It is the one table from the ways a
// sign-in fails to what the browser and the log get.
type outcome struct {
	status         int
	title, message string
	reason         string
}

var (
	outBadState = outcome{http.StatusBadRequest, "Sign-in expired",
		"This sign-in is unknown to this browser, has expired or was already used. Open the service again to start a new sign-in, at the same address as the configured redirect_uri.",
		auth.ReasonBadState}
	outBadCallback = outcome{http.StatusBadRequest, "Sign-in incomplete",
		"The identity provider sent the browser back without an authorization code. Start the sign-in again.",
		auth.ReasonNoCode}
	outDenied = outcome{http.StatusUnauthorized, "Sign-in refused",
		"The identity provider did not sign you in. Start again if that was a mistake.",
		auth.ReasonProviderRefused}
	outNoEmail = outcome{http.StatusForbidden, "No e-mail address",
		"The identity provider did not tell your e-mail address, which decides who may use this service.",
		auth.ReasonNoEmail}
	outUnverified = outcome{http.StatusForbidden, "E-mail address not verified",
		"Your e-mail address is not verified with the identity provider. Verify it there, then sign in again.",
		auth.ReasonEmailUnverified}
	outNotAdmitted = outcome{http.StatusForbidden, "Access denied",
		"Your account is not allowed to use this service. Ask its administrator to admit your e-mail address, domain or group.",
		auth.ReasonEmailNotAdmitted}
	outIDToken = outcome{http.StatusBadGateway, "Sign-in could not be verified",
		"The identity provider's answer could not be verified, so you were not signed in. The administrator will find the details in the service log.",
		auth.ReasonIDTokenRejected}
	outProvider = outcome{http.StatusBadGateway, "Identity provider unavailable",
		"The identity provider could not be reached or sent an answer that could not be used. Try again in a moment; if it persists, the administrator will find the details in the service log.",
		""}
	outServer = outcome{http.StatusInternalServerError, "Sign-in failed",
		"The sign-in could not be completed because of a server error.",
		""}
)

// refuse answers a failed sign-in with o's page and logs it: one warning
// line with the word auth, the reason and the e-mail when known (see
// auth.LogRefusedDetail), plus the reason's detail for the operator when
// there is one, in the log only (the reason itself is a fixed sentence, a
// metric label). detail must never hold a token, code or secret.
func (p *Provider) refuse(w http.ResponseWriter, r *http.Request, o outcome, email string, detail error) {
	if o.reason != "" {
		d := ""
		if detail != nil {
			d = truncate(detail.Error(), 500)
		}
		auth.LogRefusedDetail(p.log, r, Name, o.reason, d, email)
	} else if detail != nil {
		p.log.LogAttrs(r.Context(), slog.LevelError, "oauth: sign-in failed", slog.String("err", truncate(detail.Error(), 500)))
	}
	w.Header().Set("Cache-Control", "no-store")
	if auth.WantsJSON(r) {
		// The one rule of the program's refusals: a client that asks
		// for JSON gets {"error": ...}, from the one writer.
		p.errs.Refuse(w, r, o.status, o.message)
		return
	}
	// A person gets the same styled page, with the sign-in's own title.
	if err := ui.Render(w, o.status, "error", ui.ErrorPage{Brand: ui.BrandOf(r.Context()), Status: o.status, Title: o.title, Message: o.message}); err != nil {
		p.log.ErrorContext(r.Context(), "oauth: rendering a sign-in page", "err", err)
	}
}

// providerFailure answers a failure of the identity provider (or of its
// configuration) with 502. It is an outage, not a refused attempt: it is
// logged at error level with its own message, never as "auth refused".
func (p *Provider) providerFailure(w http.ResponseWriter, r *http.Request, step string, err error) {
	p.log.LogAttrs(r.Context(), slog.LevelError, "oauth: the identity provider could not be used",
		slog.String("auth_type", Name), slog.String("provider", p.cfg.Provider),
		slog.String("step", step), slog.String("err", truncate(describe(err), 500)))
	p.refuse(w, r, outcome{status: outProvider.status, title: outProvider.title, message: outProvider.message}, "", nil)
}

// serverError answers a failure of this service with 500.
func (p *Provider) serverError(w http.ResponseWriter, r *http.Request, err error) {
	p.refuse(w, r, outServer, "", err)
}

// describe renders err for a log line without what the token endpoint
// answered verbatim: x/oauth2's RetrieveError quotes the response body,
// which must not reach the logs. The status and the RFC 6749 error code
// and description are kept.
func describe(err error) string {
	var re *oauth2.RetrieveError
	if !errors.As(err, &re) {
		return err.Error()
	}
	var b strings.Builder
	b.WriteString("token endpoint answered")
	if re.Response != nil {
		b.WriteString(" " + re.Response.Status)
	}
	if re.ErrorCode != "" {
		b.WriteString(" error=" + printable(re.ErrorCode, 64))
	}
	if re.ErrorDescription != "" {
		b.WriteString(" description=" + printable(re.ErrorDescription, 200))
	}
	if re.ErrorCode == "invalid_client" || re.ErrorCode == "unauthorized_client" {
		b.WriteString(" (check client_id and client_secret)")
	}
	return b.String()
}

// printable keeps the printable ASCII of s, at most n bytes: what RFC 6749
// allows in error codes and descriptions, and what a log line can show.
func printable(s string, n int) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r > 0x7e {
			return -1
		}
		return r
	}, s)
	return truncate(s, n)
}
