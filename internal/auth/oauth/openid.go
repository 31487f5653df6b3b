package oauth

import (
	"cmp"
	"context"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/go-json-experiment/json/jsontext"
	"golang.org/x/oauth2"
	"golang.org/x/sync/singleflight"

	"github.com/backupweb/backupweb/internal/exactjson"
)

// discoveryRetry is how long a failed discovery is remembered before the
// next sign-in tries again, so that an unreachable provider is not asked
// once per click.
const discoveryRetry = 5 * time.Second

// errIDToken marks an ID token that does not verify: bad signature, wrong
// issuer or audience, expired, or a nonce that is not the flow's.
var errIDToken = errors.New("oauth: ID token rejected")

// errDiscovery marks a failed OpenID Connect discovery.
var errDiscovery = errors.New("oauth: OpenID Connect discovery failed")

// openID discovers an OpenID Connect provider lazily, on the first sign-in,
// so that the service starts while the provider is unreachable; a failed
// discovery is tried again by a later sign-in. Concurrent sign-ins share one
// discovery.
type openID struct {
	issuer   string
	clientID string
	// authURL, tokenURL, userinfoURL, endSessionURL override the
	// discovered endpoints.
	authURL, tokenURL, userinfoURL, endSessionURL string
	client                                        *http.Client
	now                                           func() time.Time

	flight singleflight.Group

	mu       sync.Mutex
	ready    *discovered
	failedAt time.Time
	lastErr  error
}

// discovered is what discovery found, with the configured overrides applied.
type discovered struct {
	endpoint oauth2.Endpoint
	userinfo string
	verifier *oidc.IDTokenVerifier
	// endSession is end_session_endpoint (configured, else discovered),
	// as written: endSessionURL checks it before any redirect; "" when
	// the provider has none.
	endSession string
	// logoutVerifier checks a logout token's signature, issuer and
	// audience; its expiry is checked by verifyLogoutToken, since a
	// logout token need not have one.
	logoutVerifier *oidc.IDTokenVerifier
	// keys tells whether the key set, read by go-oidc through a client
	// whose answers exactjson.CheckRead checks, was last refused as
	// ambiguous.
	keys *checkedKeys
}

// get returns the discovered provider, discovering it if needed.
func (o *openID) get() (*discovered, error) {
	o.mu.Lock()
	if o.ready != nil {
		d := o.ready
		o.mu.Unlock()
		return d, nil
	}
	if o.lastErr != nil && o.now().Sub(o.failedAt) < discoveryRetry {
		err := o.lastErr
		o.mu.Unlock()
		return nil, err
	}
	o.mu.Unlock()
	v, err, _ := o.flight.Do("discover", func() (any, error) {
		d, err := o.discover()
		o.mu.Lock()
		defer o.mu.Unlock()
		if err != nil {
			o.failedAt, o.lastErr = o.now(), err
			return nil, err
		}
		o.ready, o.lastErr = d, nil
		return d, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*discovered), nil
}

// document is what backupweb reads of a discovery document (OpenID
// Connect Discovery 1.0 section 3), by exact member names.
type document struct {
	Issuer     string   `json:"issuer"`
	AuthURL    string   `json:"authorization_endpoint"`
	TokenURL   string   `json:"token_endpoint"`
	Userinfo   string   `json:"userinfo_endpoint"`
	JWKS       string   `json:"jwks_uri"`
	EndSession string   `json:"end_session_endpoint"`
	Algorithms []string `json:"id_token_signing_alg_values_supported"`
}

// signingAlgorithms are the ID token signatures go-oidc verifies; a
// discovery document's other values (HS256, none) are left out, as
// go-oidc's own discovery does.
var signingAlgorithms = []string{oidc.RS256, oidc.RS384, oidc.RS512, oidc.ES256, oidc.ES384, oidc.ES512, oidc.PS256, oidc.PS384, oidc.PS512, oidc.EdDSA}

// discover fetches the discovery document and reads it with
// exactjson.Decode (go-oidc's own discovery would read it with
// encoding/json). The client's timeout bounds it; the key set is fetched
// later, on the first ID token, by go-oidc with a client that checks its
// answers (checkedKeys).
func (o *openID) discover() (*discovered, error) {
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	var doc document
	if _, err := fetchJSON(ctx, o.client, nil, strings.TrimSuffix(o.issuer, "/")+"/.well-known/openid-configuration", &doc); err != nil {
		return nil, fmt.Errorf("%w at %s: %w", errDiscovery, o.issuer, err)
	}
	if doc.Issuer != o.issuer {
		return nil, fmt.Errorf("%w: the provider at %s calls itself %q; set issuer to exactly that", errDiscovery, o.issuer, truncate(doc.Issuer, 200))
	}
	keys := &checkedKeys{}
	cfg := oidc.ProviderConfig{
		IssuerURL: doc.Issuer, AuthURL: doc.AuthURL, TokenURL: doc.TokenURL, UserInfoURL: doc.Userinfo, JWKSURL: doc.JWKS,
		Algorithms: slices.DeleteFunc(doc.Algorithms, func(a string) bool { return !slices.Contains(signingAlgorithms, a) }),
	}
	p := cfg.NewProvider(oidc.ClientContext(context.Background(), keys.client(o.client)))
	d := &discovered{
		endpoint: p.Endpoint(),
		userinfo: cmp.Or(o.userinfoURL, p.UserInfoEndpoint()),
		verifier: p.Verifier(&oidc.Config{ClientID: o.clientID, Now: o.now}),
		keys:     keys,
		// A logout token's exp is optional in the specification's first
		// version: verifyLogoutToken checks it when present, and iat.
		logoutVerifier: p.Verifier(&oidc.Config{ClientID: o.clientID, Now: o.now, SkipExpiryCheck: true}),
	}
	d.endSession = cmp.Or(o.endSessionURL, doc.EndSession)
	d.endpoint.AuthURL = cmp.Or(o.authURL, d.endpoint.AuthURL)
	d.endpoint.TokenURL = cmp.Or(o.tokenURL, d.endpoint.TokenURL)
	if d.endpoint.AuthURL == "" || d.endpoint.TokenURL == "" {
		return nil, fmt.Errorf("%w at %s: the discovery document names no authorization or token endpoint", errDiscovery, o.issuer)
	}
	return d, nil
}

// idTokenNames are the members go-oidc reads from an ID token's payload
// with encoding/json (its idToken type, distributed claims included):
// the payload must hold no letter-case variant of them (see
// exactjson.CheckRead).
var idTokenNames = []string{"iss", "sub", "aud", "exp", "iat", "nbf", "nonce", "at_hash", "_claim_names", "_claim_sources", "endpoint", "access_token"}

// checkIDToken refuses an ID token whose header or payload names a member
// twice, or whose payload holds a letter-case variant of a member go-oidc
// reads ("Sub", "NONCE"), before go-oidc reads it: with those, go-oidc and
// exactjson would read different claims. A token that is not three
// base64url parts of JSON is left to go-oidc, which refuses it (and a
// payload go-oidc accepts that exactjson cannot read is refused after the
// signature is checked, by decodeClaims).
func checkIDToken(raw string) error {
	parts := strings.Split(raw, ".")
	if len(parts) != 3 {
		return nil
	}
	for i, names := range [][]string{nil, idTokenNames} {
		part, err := base64.RawURLEncoding.DecodeString(parts[i])
		if err != nil {
			return nil
		}
		err = exactjson.CheckRead(part, names...)
		if amb, ok := errors.AsType[*exactjson.Error](err); ok {
			return fmt.Errorf("%w: its %s: %w", errIDToken, [...]string{"header", "claims"}[i], amb)
		}
	}
	return nil
}

// identify verifies the ID token of tok (signature, issuer, audience,
// authorized party, expiry, nonce, access token hash) and returns the
// account it names, its claims read by decodeClaims. When the ID token
// carries no e-mail, the claims come from the user-information endpoint,
// whose subject must be the token's. When groupsClaim is set and the ID
// token lacks that claim, the claim is taken from the user-information
// endpoint (same subject check); a failure there fails the sign-in, so
// that no one is admitted without their groups.
func (d *discovered) identify(ctx context.Context, c *http.Client, tok *oauth2.Token, nonce, clientID, groupsClaim string) (identity, error) {
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		return identity{}, fmt.Errorf("%w: the token response has no id_token", errIDToken)
	}
	if err := checkIDToken(raw); err != nil {
		return identity{}, err
	}
	idt, err := d.verifier.Verify(oidc.ClientContext(ctx, c), raw)
	if err != nil {
		if amb := d.keys.refused(); amb != nil {
			return identity{}, fmt.Errorf("%w: the provider's key set: %w", errIDToken, amb)
		}
		return identity{}, fmt.Errorf("%w: %v", errIDToken, err)
	}
	if nonce == "" || subtle.ConstantTimeCompare([]byte(idt.Nonce), []byte(nonce)) != 1 {
		return identity{}, fmt.Errorf("%w: its nonce is not the one this sign-in sent", errIDToken)
	}
	payload, err := base64.RawURLEncoding.DecodeString(strings.Split(raw, ".")[1])
	if err != nil {
		return identity{}, fmt.Errorf("%w: %v", errIDToken, err)
	}
	id, azp, err := decodeClaims(payload)
	if err != nil {
		return identity{}, fmt.Errorf("%w: its claims: %w", errIDToken, err)
	}
	if (len(idt.Audience) > 1 || azp != "") && azp != clientID {
		return identity{}, fmt.Errorf("%w: issued to another party (azp)", errIDToken)
	}
	if idt.AccessTokenHash != "" {
		if err := idt.VerifyAccessToken(tok.AccessToken); err != nil {
			return identity{}, fmt.Errorf("%w: %v", errIDToken, err)
		}
	}
	id.Subject = idt.Subject
	id.IDToken = raw
	all := id.Claims
	_, hasGroups := all[groupsClaim]
	if id.Email != "" && (groupsClaim == "" || hasGroups) || d.userinfo == "" {
		return id, nil
	}
	more, err := userinfoClaims(ctx, c, tok, d.userinfo)
	if err != nil {
		return identity{}, err
	}
	if more.Subject != idt.Subject {
		return identity{}, fmt.Errorf("%w: the user-information answer is about another subject than the ID token", errProfile)
	}
	out := id
	if id.Email == "" {
		out = more
		// The logout facts are the verified ID token's.
		out.Subject, out.SessionID, out.IDToken = id.Subject, id.SessionID, id.IDToken
	}
	// The signed ID token's groups claim, when it has one, wins over the
	// user-information answer's.
	v, ok := all[groupsClaim]
	if !ok {
		v, ok = more.Claims[groupsClaim]
	}
	if groupsClaim != "" && ok {
		out.Claims = maps.Clone(out.Claims)
		if out.Claims == nil {
			out.Claims = map[string]jsontext.Value{}
		}
		out.Claims[groupsClaim] = v
	}
	return out, nil
}

// truncate shortens s to at most n bytes for a log line.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
