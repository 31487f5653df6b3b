package auth

import (
	"log/slog"
	"net/http"

	"github.com/backupweb/backupweb/internal/peer"
	"github.com/backupweb/backupweb/internal/refusal"
)

// Reasons for refused attempts, as they appear in logs and as the values
// of the reason label of backupweb_auth_refused_total. Each is a fixed
// sentence: what a client sent (an error code, a name) never becomes part
// of a reason; it goes to the log line's detail instead (Audit.RefusedDetail).
const (
	ReasonBadCredentials = "bad credentials"
	ReasonMalformed      = "malformed credentials"
	ReasonThrottled      = "too many failures"
	ReasonBadCSRF        = "missing or wrong csrf token"
	ReasonTooLong        = "password longer than 72 bytes"
	ReasonExpired        = "session expired"
	ReasonNotAdmitted    = "session no longer admitted (user removed or password changed)"
	// Reasons of the second-factor step (type flask-login).
	ReasonBadCode        = "wrong second factor code"
	ReasonCodeUsed       = "second factor code already used"
	ReasonPendingExpired = "second factor step expired or already used"
	ReasonFactorsBroken  = "second factor record cannot be used"
	// The OAuth sign-in's reasons.
	ReasonBadState         = "missing or wrong oauth state"
	ReasonNoCode           = "callback without code"
	ReasonProviderRefused  = "identity provider refused"
	ReasonNoEmail          = "no e-mail from identity provider"
	ReasonEmailUnverified  = "e-mail not verified"
	ReasonEmailNotAdmitted = "e-mail not admitted"
	ReasonIDTokenRejected  = "id token rejected"
	// ReasonLogoutToken is a back-channel logout whose logout token was
	// refused: not signed by the provider, for another client, too old,
	// already used, or not a logout token.
	ReasonLogoutToken = "logout token rejected"
	// ReasonAmbiguousAnswer is an identity provider's answer (claims,
	// user information, an API's answer, discovery, key set) holding an
	// object that names a member twice, or a letter-case variant of a
	// member a library reads: no sign-in is made from it.
	ReasonAmbiguousAnswer = "ambiguous identity provider answer"
	// The access rules' reasons (a signed-in user refused) are
	// access.RefusalReasons.
	//
	// The passkey sign-in's reasons: an answer that does not verify
	// (wrong origin or RP id, bad signature, unknown credential, a used
	// or expired ceremony), and a sign count that did not increase.
	ReasonPasskeyRefused = "passkey refused"
	ReasonPasskeyCloned  = "passkey sign count did not increase"
	// The machine tokens' reasons (type flask-login): a token no one
	// holds (wrong, revoked or made up), one past its expiry, and one
	// refused because the tokens file does not parse.
	ReasonTokenUnknown = "unknown or revoked token"
	ReasonTokenExpired = "token expired"
	ReasonTokensBroken = "tokens file cannot be used"
	// ReasonOutOfScope is a good token's request that its scope
	// (-read-only, -path) does not permit.
	ReasonOutOfScope = "outside the token's scope"
	// ReasonTwoCredentials is a request with two Authorization headers,
	// or one holding two credentials: which one counts would depend on
	// who reads it.
	ReasonTwoCredentials = "more than one credential"
	// ReasonOther stands, in metrics, for any reason not listed here.
	ReasonOther = "other"
)

// RefusalReasons returns the fixed set of reasons the providers' refusals
// are counted under (ReasonOther included), in a stable order. The access
// rules' are access.RefusalReasons; metrics.RefusalReasons joins the two.
func RefusalReasons() []string {
	return []string{ReasonBadCredentials, ReasonMalformed, ReasonThrottled, ReasonBadCSRF, ReasonTooLong,
		ReasonExpired, ReasonNotAdmitted, ReasonBadCode, ReasonCodeUsed, ReasonPendingExpired, ReasonFactorsBroken, ReasonBadState, ReasonNoCode, ReasonProviderRefused, ReasonNoEmail,
		ReasonEmailUnverified, ReasonEmailNotAdmitted, ReasonIDTokenRejected, ReasonLogoutToken, ReasonAmbiguousAnswer, ReasonPasskeyRefused, ReasonPasskeyCloned,
		ReasonTokenUnknown, ReasonTokenExpired, ReasonTokensBroken, ReasonOutOfScope, ReasonTwoCredentials, ReasonOther}
}

// Audit writes the contract's lines for authentication outcomes to Log
// and tells Events of each: the one place an outcome is both logged and
// counted. A provider gets its own from Deps.Audit.
type Audit struct {
	// Log receives the lines. Nil: slog.Default().
	Log *slog.Logger
	// Events is told of each outcome. Nil: nobody is.
	Events Events
}

// Audit returns the provider's Audit: its logger and the Events of its
// hooks.
func (e Deps) Audit() Audit { return Audit{Log: e.Log(), Events: e.Hooks.Events} }

func (a Audit) log() *slog.Logger {
	if a.Log == nil {
		return slog.Default()
	}
	return a.Log
}

// With returns a copy of a whose lines carry args (see slog.Logger.With).
func (a Audit) With(args ...any) Audit {
	a.Log = a.log().With(args...)
	return a
}

// Refused writes the contract's line for a refused authentication
// attempt: warning level, the word "auth", the type, the reason, the client
// address (forwarded only from trusted proxies, see package peer) and the
// user name when one was given, and counts it. Values go through slog's
// handlers, which quote and escape them, so a user name holding a newline
// cannot forge a line. Callers must never pass a password, hash, token or
// key. reason should be one of the Reason constants: it is counted as a
// metric label.
func (a Audit) Refused(r *http.Request, authType, reason, username string) {
	a.RefusedDetail(r, authType, reason, "", username)
}

// RefusedDetail is Refused with a detail for the operator (an error code
// the identity provider sent, a verification error): it goes to the log
// line's detail attribute only, never into the reason, so that text a
// client chose cannot create metric series. Empty: no detail.
func (a Audit) RefusedDetail(r *http.Request, authType, reason, detail, username string) {
	attrs := []slog.Attr{
		slog.String("auth_type", authType),
		slog.String("reason", reason),
		slog.String("client", peer.Of(r).String()),
	}
	if detail != "" {
		attrs = append(attrs, slog.String("detail", detail))
	}
	if username != "" {
		attrs = append(attrs, slog.String("user", username))
	}
	a.log().LogAttrs(r.Context(), slog.LevelWarn, "auth refused", attrs...)
	if a.Events != nil {
		a.Events.Refused(authType, reason)
	}
}

// OutOfScope answers u's request, which the scope of u's machine token
// does not permit, with 403 (OutOfScope) and logs and counts the refusal
// under ReasonOutOfScope, the scope as its detail: the request came with
// a good token, so unlike a wrong one it is no failure of the address.
func (a Audit) OutOfScope(w http.ResponseWriter, r *http.Request, errs *refusal.Errors, u User) {
	a.RefusedDetail(r, u.Type, ReasonOutOfScope, u.Scope.String(), u.Name)
	errs.Refuse(w, r, refusal.OutOfScope)
}

// SignedIn writes the info line of a successful sign-in (a login form, an
// OAuth callback) and counts it.
func (a Audit) SignedIn(r *http.Request, authType, username string) {
	logSession(a.log(), r, "auth signed in", authType, username)
	if a.Events != nil {
		a.Events.SignedIn(authType)
	}
}

// SignedOut writes the info line of a logout and counts it.
func (a Audit) SignedOut(r *http.Request, authType, username string) {
	logSession(a.log(), r, "auth signed out", authType, username)
	if a.Events != nil {
		a.Events.SignedOut(authType)
	}
}

// Throttled counts one request refused because its client is throttled.
// Only the first refusal of a block is logged (Refused); each is counted.
func (a Audit) Throttled(authType string) {
	if a.Events != nil {
		a.Events.Throttled(authType)
	}
}

func logSession(log *slog.Logger, r *http.Request, msg, authType, username string) {
	log.LogAttrs(r.Context(), slog.LevelInfo, msg,
		slog.String("auth_type", authType),
		slog.String("user", username),
		slog.String("client", peer.Of(r).String()))
}

// BlockEnded writes the line that closes a throttling block: the refusal
// that opened it was logged once (Refused with ReasonThrottled), the
// attempts refused while it lasted are counted here instead of logged one
// by one, so a flood cannot flood the log. key is the client address or
// "user NAME"; it is escaped like Refused's values.
func (a Audit) BlockEnded(r *http.Request, authType, key string, refused int) {
	a.log().LogAttrs(r.Context(), slog.LevelInfo, "auth throttling block ended",
		slog.String("auth_type", authType),
		slog.String("key", key),
		slog.Int("refused", refused))
}

// LogFlood writes the one warning a throttling table logs when it is full
// and starts forgetting keys that still mattered: a flood of new client
// addresses or user names. Blocked keys are kept; clean ones go first.
func LogFlood(log *slog.Logger, authType, what string) {
	log.Warn("auth: the throttling table is full: a flood of new "+what+" is arriving; the oldest keys that are not blocked are being forgotten (blocked ones are kept)",
		"auth_type", authType)
}

// LogBeginFlood writes the one warning of a limit on begins (sign-ins or
// passkey ceremonies that keep state on the server) reached by every
// client address together: for a while every client is answered 429.
func LogBeginFlood(log *slog.Logger, authType, what string) {
	log.Warn("auth: too many "+what+" begun from every address together; new ones are refused (429) for a minute",
		"auth_type", authType)
}
