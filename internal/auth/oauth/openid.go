package oauth

import (
	"cmp"
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"
	"golang.org/x/sync/singleflight"
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
	// authURL, tokenURL, userinfoURL override the discovered endpoints.
	authURL, tokenURL, userinfoURL string
	client                         *http.Client
	now                            func() time.Time

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

// discover fetches the discovery document. The client's timeout bounds it;
// the key set is fetched later, on the first ID token, with the same client.
func (o *openID) discover() (*discovered, error) {
	ctx, cancel := context.WithTimeout(oidc.ClientContext(context.Background(), o.client), requestTimeout)
	defer cancel()
	p, err := oidc.NewProvider(ctx, o.issuer)
	if err != nil {
		var mismatch *oidc.IssuerMismatchError
		if errors.As(err, &mismatch) {
			return nil, fmt.Errorf("%w: the provider at %s calls itself %q; set issuer to exactly that", errDiscovery, o.issuer, mismatch.Discovered)
		}
		return nil, fmt.Errorf("%w at %s: %s", errDiscovery, o.issuer, truncate(err.Error(), 300))
	}
	d := &discovered{
		endpoint: p.Endpoint(),
		userinfo: cmp.Or(o.userinfoURL, p.UserInfoEndpoint()),
		verifier: p.Verifier(&oidc.Config{ClientID: o.clientID, Now: o.now}),
	}
	d.endpoint.AuthURL = cmp.Or(o.authURL, d.endpoint.AuthURL)
	d.endpoint.TokenURL = cmp.Or(o.tokenURL, d.endpoint.TokenURL)
	if d.endpoint.AuthURL == "" || d.endpoint.TokenURL == "" {
		return nil, fmt.Errorf("%w at %s: the discovery document names no authorization or token endpoint", errDiscovery, o.issuer)
	}
	return d, nil
}

// identify verifies the ID token of tok (signature, issuer, audience,
// authorized party, expiry, nonce, access token hash) and returns the
// account it names. When the ID token carries no e-mail, the claims come
// from the user-information endpoint, whose subject must be the token's.
// When groupsClaim is set and the ID token lacks that claim, the claim is
// taken from the user-information endpoint (same subject check); a failure
// there fails the sign-in, so that no one is admitted without their groups.
func (d *discovered) identify(ctx context.Context, c *http.Client, tok *oauth2.Token, nonce, clientID, groupsClaim string) (identity, error) {
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		return identity{}, fmt.Errorf("%w: the token response has no id_token", errIDToken)
	}
	idt, err := d.verifier.Verify(oidc.ClientContext(ctx, c), raw)
	if err != nil {
		return identity{}, fmt.Errorf("%w: %v", errIDToken, err)
	}
	if nonce == "" || subtle.ConstantTimeCompare([]byte(idt.Nonce), []byte(nonce)) != 1 {
		return identity{}, fmt.Errorf("%w: its nonce is not the one this sign-in sent", errIDToken)
	}
	var cl struct {
		claims
		AuthorizedParty string `json:"azp"`
	}
	var all map[string]json.RawMessage
	if err := idt.Claims(&cl); err != nil {
		return identity{}, fmt.Errorf("%w: %v", errIDToken, err)
	}
	if err := idt.Claims(&all); err != nil {
		return identity{}, fmt.Errorf("%w: %v", errIDToken, err)
	}
	if (len(idt.Audience) > 1 || cl.AuthorizedParty != "") && cl.AuthorizedParty != clientID {
		return identity{}, fmt.Errorf("%w: issued to another party (azp)", errIDToken)
	}
	if idt.AccessTokenHash != "" {
		if err := idt.VerifyAccessToken(tok.AccessToken); err != nil {
			return identity{}, fmt.Errorf("%w: %v", errIDToken, err)
		}
	}
	id := cl.claims.identity()
	id.Subject = idt.Subject
	id.Claims = all
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
			out.Claims = map[string]json.RawMessage{}
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
