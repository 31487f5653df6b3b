package oidctest

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"fmt"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/zitadel/oidc/v3/pkg/crypto"
)

// BackchannelEvent is the member of a logout token's events claim that
// makes it one (OpenID Connect Back-Channel Logout 1.0, section 2.4).
const BackchannelEvent = "http://schemas.openid.net/event/backchannel-logout"

// LogoutClaims returns the claims of a good logout token from the
// provider to clientID about s, issued at iat: iss, aud, iat, exp (two
// minutes later), a fresh jti, the events claim, sub and sid. A test
// changes or deletes members to make a bad one.
func (p *Provider) LogoutClaims(clientID string, s Session, iat time.Time) map[string]any {
	return map[string]any{
		"iss":    p.Issuer,
		"aud":    clientID,
		"iat":    iat.Unix(),
		"exp":    iat.Add(2 * time.Minute).Unix(),
		"jti":    rand.Text(),
		"events": map[string]any{BackchannelEvent: map[string]any{}},
		"sub":    s.Subject,
		"sid":    s.SID,
	}
}

// SignLogoutToken signs claims with the provider's own signing key, as
// its ID tokens are (the key its key set publishes, its kid in the
// header), with typ logout+jwt.
func (p *Provider) SignLogoutToken(claims map[string]any) (string, error) {
	key, err := p.storage.SigningKey(context.Background())
	if err != nil {
		return "", fmt.Errorf("oidctest: the signing key: %w", err)
	}
	return sign(claims, key.SignatureAlgorithm(), key.Key(), key.ID())
}

// ForgeLogoutToken signs claims with a key the provider never published,
// under the kid of the provider's own key: a forgery.
func (p *Provider) ForgeLogoutToken(claims map[string]any) (string, error) {
	key, err := p.storage.SigningKey(context.Background())
	if err != nil {
		return "", fmt.Errorf("oidctest: the signing key: %w", err)
	}
	other, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return "", err
	}
	return sign(claims, key.SignatureAlgorithm(), other, key.ID())
}

// sign makes a compact JWS of claims.
func sign(claims map[string]any, alg jose.SignatureAlgorithm, key any, kid string) (string, error) {
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: key},
		(&jose.SignerOptions{}).WithType("logout+jwt").WithHeader("kid", kid))
	if err != nil {
		return "", fmt.Errorf("oidctest: %w", err)
	}
	return crypto.Sign(claims, signer)
}

// SignLogoutPayload signs payload, JSON written by the test (a member
// named twice, say), with the provider's own signing key.
func (p *Provider) SignLogoutPayload(payload []byte) (string, error) {
	key, err := p.storage.SigningKey(context.Background())
	if err != nil {
		return "", fmt.Errorf("oidctest: the signing key: %w", err)
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: key.SignatureAlgorithm(), Key: key.Key()},
		(&jose.SignerOptions{}).WithType("logout+jwt").WithHeader("kid", key.ID()))
	if err != nil {
		return "", fmt.Errorf("oidctest: %w", err)
	}
	return crypto.SignPayload(payload, signer)
}
