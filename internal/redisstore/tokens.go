package redisstore

import (
	"context"
	"time"

	"github.com/redis/rueidis"
)

// RevokeToken marks the machine token with id revoked for ttl
// ("token-revoked:ID", which expires): every instance that checks it
// (TokenRevoked) refuses the token at its next request, before its own
// watch of the tokens file has seen the revocation. The id is not secret:
// it names a token, it cannot be used as one.
func (c *Client) RevokeToken(ctx context.Context, id string, ttl time.Duration) error {
	ctx, cancel := c.ctx(ctx)
	defer cancel()
	err := c.rd.Do(ctx, c.rd.B().Set().Key(c.key("token-revoked", id)).Value("1").Px(max(ttl, time.Second)).Build()).Error()
	return c.result("revoke token", err)
}

// TokenRevoked reports whether the machine token with id is marked
// revoked (RevokeToken). One EXISTS per token request: the price of a
// session lookup, so token requests and session requests cost alike.
func (c *Client) TokenRevoked(ctx context.Context, id string) (bool, error) {
	ctx, cancel := c.ctx(ctx)
	defer cancel()
	n, err := c.rd.Do(ctx, c.rd.B().Exists().Key(c.key("token-revoked", id)).Build()).AsInt64()
	if rueidis.IsRedisNil(err) {
		err = nil
	}
	if err = c.result("check token", err); err != nil {
		return false, err
	}
	return n > 0, nil
}
