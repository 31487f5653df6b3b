package oauth

import (
	"errors"
	"log/slog"
	"net/http"
	"strings"

	"golang.org/x/oauth2"

	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/exactjson"
	"github.com/backupweb/backupweb/internal/refusal"
)

// outcome is how a failed sign-in is answered: the catalogue's refusal
// (status, title, sentence: refusal.OAuthBadState and its neighbours) and the
// reason logged. It is the one table from the ways a sign-in fails to what
// the log gets.
type outcome struct {
	refusal refusal.Refusal
	reason  string
}

var (
	outBadState    = outcome{refusal.OAuthBadState, auth.ReasonBadState}
	outBadCallback = outcome{refusal.OAuthNoCode, auth.ReasonNoCode}
	outDenied      = outcome{refusal.OAuthDenied, auth.ReasonProviderRefused}
	outNoEmail     = outcome{refusal.OAuthNoEmail, auth.ReasonNoEmail}
	outUnverified  = outcome{refusal.OAuthUnverified, auth.ReasonEmailUnverified}
	outNotAdmitted = outcome{refusal.OAuthNotAdmitted, auth.ReasonEmailNotAdmitted}
	outIDToken     = outcome{refusal.OAuthIDToken, auth.ReasonIDTokenRejected}
	outProvider    = outcome{refusal.OAuthProvider, ""}
	outServer      = outcome{refusal.OAuthServer, ""}
)

// refuse answers a failed sign-in with o's page and logs it: one warning
// line with the word auth, the reason and the e-mail when known (see
// auth.Audit.RefusedDetail), plus the reason's detail for the operator when
// there is one, in the log only (the reason itself is a fixed sentence, a
// metric label). detail must never hold a token, code or secret.
func (p *Provider) refuse(w http.ResponseWriter, r *http.Request, o outcome, email string, detail error) {
	if o.reason != "" {
		d := ""
		if detail != nil {
			d = truncate(detail.Error(), 500)
		}
		p.audit.RefusedDetail(r, Name, o.reason, d, email)
	} else if detail != nil {
		p.log.LogAttrs(r.Context(), slog.LevelError, "oauth: sign-in failed", slog.String("err", truncate(detail.Error(), 500)))
	}
	// The one writer: JSON for a client that asks for it, the styled
	// page with the sign-in's own title for a person.
	p.errs.Refuse(w, r, o.refusal)
}

// providerFailure answers a failure of the identity provider (or of its
// configuration) with 502. It is an outage, not a refused attempt: it is
// logged at error level with its own message, never as "auth refused".
// An answer refused as ambiguous is the exception (see refuseAmbiguous).
func (p *Provider) providerFailure(w http.ResponseWriter, r *http.Request, step string, err error) {
	if amb, ok := errors.AsType[*exactjson.Error](err); ok {
		p.refuseAmbiguous(w, r, step, amb, err)
		return
	}
	p.log.LogAttrs(r.Context(), slog.LevelError, "oauth: the identity provider could not be used",
		slog.String("auth_type", Name), slog.String("provider", p.cfg.Provider),
		slog.String("step", step), slog.String("err", truncate(describe(err), 500)))
	p.refuse(w, r, outProvider, "", nil)
}

// refuseAmbiguous answers a sign-in whose provider answer named a member
// twice, or held a letter-case variant of a member a library reads, with
// 502 and the refusal line: the provider (every line of p.audit names
// it), the member, and where it was (the step and the error, which names
// the URL or the ID token's part). Whoever can add a member to their own
// claims or profile can cause it, so it is a refused attempt rather than
// an outage.
func (p *Provider) refuseAmbiguous(w http.ResponseWriter, r *http.Request, step string, amb *exactjson.Error, err error) {
	// slog quotes and escapes a name that holds what a line must not.
	member := amb.Member
	if len(member) > 64 {
		member = strings.ToValidUTF8(member[:64], "") + "..."
	}
	p.audit.With("member", member).RefusedDetail(r, Name, auth.ReasonAmbiguousAnswer, step+": "+truncate(err.Error(), 500), "")
	p.errs.Refuse(w, r, refusal.OAuthProvider)
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
