package oauth

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/backupweb/backupweb/internal/exactjson"
	"github.com/backupweb/backupweb/internal/session"
)

// backchannelEvent is the member of a logout token's events claim that
// makes it one (OpenID Connect Back-Channel Logout 1.0, section 2.4).
const backchannelEvent = "http://schemas.openid.net/event/backchannel-logout"

// Bounds of a logout token's iat: it may be at most logoutTokenMaxAge old
// and at most logoutClockSkew ahead of this machine's clock. Its jti is
// remembered for longer than that window (logoutJTITTL), so that a token
// is taken once while it can be taken at all.
const (
	logoutTokenMaxAge = 5 * time.Minute
	logoutClockSkew   = time.Minute
	logoutJTITTL      = logoutTokenMaxAge + 2*logoutClockSkew
)

// maxLogoutToken bounds a logout token, and maxJTI its jti.
const (
	maxLogoutToken = 16 << 10
	maxJTI         = 256
)

// errLogoutToken marks a logout token that is refused: its message says
// why, never what the token holds beyond that.
var errLogoutToken = errors.New("logout token refused")

// logoutClaims are the claims backupweb reads of a logout token, by their
// exact names (decodeLogoutClaims).
type logoutClaims struct {
	Issuer    string `json:"iss"`
	Subject   string `json:"sub"`
	SessionID string `json:"sid"`
	JTI       string `json:"jti"`
	// IssuedAt and Expiry are NumericDates (seconds); nil when absent.
	IssuedAt *float64                  `json:"iat"`
	Expiry   *float64                  `json:"exp"`
	Events   map[string]jsontext.Value `json:"events"`
}

// logoutTokenNames are the members go-oidc reads from a logout token's
// payload with encoding/json: the payload must hold no letter-case
// variant of them (see exactjson.CheckRead).
var logoutTokenNames = idTokenNames

// decodeLogoutClaims reads a logout token's payload (JSON) with
// exactjson.Decode, and checks what the specification asks of its claims
// apart from the signature, the issuer, the audience and time (section
// 2.6, steps 4 to 6): an events claim that is an object whose backchannel
// logout member is an object, a sub or a sid (non-empty strings), no
// nonce, a jti. A member named twice, at any depth, is an
// *exactjson.Error. It is a pure function of data, the parser the fuzz
// target drives.
func decodeLogoutClaims(data []byte) (logoutClaims, error) {
	var all map[string]jsontext.Value
	if err := exactjson.Decode(data, &all); err != nil {
		return logoutClaims{}, err
	}
	var c logoutClaims
	if err := exactjson.Decode(data, &c); err != nil {
		return logoutClaims{}, err
	}
	ev, ok := c.Events[backchannelEvent]
	switch {
	case !ok || ev.Kind() != '{':
		return logoutClaims{}, fmt.Errorf("%w: its events claim does not name a back-channel logout", errLogoutToken)
	case c.Subject == "" && c.SessionID == "":
		return logoutClaims{}, fmt.Errorf("%w: it names neither a subject (sub) nor a session (sid)", errLogoutToken)
	case hasMember(all, "nonce"):
		return logoutClaims{}, fmt.Errorf("%w: it carries a nonce, which a logout token must not (an ID token is no logout token)", errLogoutToken)
	case c.JTI == "" || len(c.JTI) > maxJTI:
		return logoutClaims{}, fmt.Errorf("%w: its jti is missing or longer than %d bytes", errLogoutToken, maxJTI)
	case c.IssuedAt == nil:
		return logoutClaims{}, fmt.Errorf("%w: it has no iat", errLogoutToken)
	}
	return c, nil
}

// hasMember reports whether the object all names member.
func hasMember(all map[string]jsontext.Value, member string) bool {
	_, ok := all[member]
	return ok
}

// checkTime checks the claims' iat and exp at now: iat no older than
// logoutTokenMaxAge and no further ahead than logoutClockSkew, exp (when
// present) not passed.
func (c logoutClaims) checkTime(now time.Time) error {
	iat, ok := seconds(*c.IssuedAt)
	switch {
	case !ok:
		return fmt.Errorf("%w: its iat is not a time", errLogoutToken)
	case iat.After(now.Add(logoutClockSkew)):
		return fmt.Errorf("%w: it was issued in the future (iat %s)", errLogoutToken, iat.UTC().Format(time.RFC3339))
	case iat.Before(now.Add(-logoutTokenMaxAge)):
		return fmt.Errorf("%w: it is too old (iat %s, more than %s ago)", errLogoutToken, iat.UTC().Format(time.RFC3339), logoutTokenMaxAge)
	}
	if c.Expiry != nil {
		exp, ok := seconds(*c.Expiry)
		if !ok || !now.Before(exp.Add(logoutClockSkew)) {
			return fmt.Errorf("%w: it has expired", errLogoutToken)
		}
	}
	return nil
}

// seconds is the NumericDate v as a time; ok is false for a value no
// clock reaches.
func seconds(v float64) (time.Time, bool) {
	if math.IsNaN(v) || v < 0 || v > 1<<40 {
		return time.Time{}, false
	}
	sec, frac := math.Modf(v)
	return time.Unix(int64(sec), int64(frac*1e9)), true
}

// matches reports whether the session d is one the logout token names: a
// session of provider made by this issuer, with the token's sid when it
// has one and its sub when it has one (section 2.7: a sid ends that
// session of the provider's, a sub alone every session of the account).
func (c logoutClaims) matches(provider string, d session.Data) bool {
	if d.Attrs.Get("provider") != provider || d.Attrs.Get(issuerAttr) != c.Issuer || d.Attrs.Get(subjectAttr) == "" {
		return false
	}
	if c.SessionID != "" && d.Attrs.Get(sessionIDAttr) != c.SessionID {
		return false
	}
	return c.Subject == "" || d.Attrs.Get(subjectAttr) == c.Subject
}

// checkLogoutHeader refuses a token whose header is not JSON, names a
// member twice, or names an algorithm other than those go-oidc verifies
// (none, and the HMACs keyed with a client secret, above all), before
// any key is looked up; and a payload that holds a letter-case variant
// of a member go-oidc reads.
func checkLogoutHeader(raw string) error {
	parts := strings.Split(raw, ".")
	if len(parts) != 3 {
		return fmt.Errorf("%w: it is not a signed JWT (three parts)", errLogoutToken)
	}
	header, err := base64.RawURLEncoding.DecodeString(parts[0])
	if err != nil {
		return fmt.Errorf("%w: its header is not base64url", errLogoutToken)
	}
	var h struct {
		Alg string `json:"alg"`
	}
	if err := exactjson.Decode(header, &h); err != nil {
		return fmt.Errorf("%w: its header: %w", errLogoutToken, err)
	}
	if !slices.Contains(signingAlgorithms, h.Alg) {
		return fmt.Errorf("%w: it is signed with %q, not an asymmetric algorithm backupweb verifies", errLogoutToken, printable(h.Alg, 16))
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return fmt.Errorf("%w: its payload is not base64url", errLogoutToken)
	}
	if err := exactjson.CheckRead(payload, logoutTokenNames...); err != nil {
		return fmt.Errorf("%w: its claims: %w", errLogoutToken, err)
	}
	return nil
}

// verifyLogoutToken checks a logout token as OpenID Connect Back-Channel
// Logout 1.0 section 2.6 says, except its single use (the caller's): the
// header (checkLogoutHeader), the signature by the provider's keys, iss
// and aud (go-oidc), then the claims (decodeLogoutClaims) and their times
// at now.
func (d *discovered) verifyLogoutToken(ctx context.Context, c *http.Client, raw string, now time.Time) (logoutClaims, error) {
	if len(raw) > maxLogoutToken {
		return logoutClaims{}, fmt.Errorf("%w: it is longer than %d bytes", errLogoutToken, maxLogoutToken)
	}
	if err := checkLogoutHeader(raw); err != nil {
		return logoutClaims{}, err
	}
	idt, err := d.logoutVerifier.Verify(oidc.ClientContext(ctx, c), raw)
	if err != nil {
		if amb := d.keys.refused(); amb != nil {
			return logoutClaims{}, fmt.Errorf("%w: the provider's key set: %w", errLogoutToken, amb)
		}
		return logoutClaims{}, fmt.Errorf("%w: %v", errLogoutToken, err)
	}
	payload, err := base64.RawURLEncoding.DecodeString(strings.Split(raw, ".")[1])
	if err != nil {
		return logoutClaims{}, fmt.Errorf("%w: %v", errLogoutToken, err)
	}
	cl, err := decodeLogoutClaims(payload)
	if err != nil {
		return logoutClaims{}, err
	}
	if cl.Issuer != idt.Issuer || cl.Subject != idt.Subject {
		return logoutClaims{}, fmt.Errorf("%w: its claims read two ways", errLogoutToken)
	}
	if err := cl.checkTime(now); err != nil {
		return logoutClaims{}, err
	}
	return cl, nil
}
