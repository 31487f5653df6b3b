package redisstore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"time"

	"github.com/redis/rueidis"
)

// errBadReply is a reply of a shape the program never asks for.
var errBadReply = errors.New("unexpected reply")

// SpendOnce marks token of kind used for ttl and reports whether it was
// unused until now: "once:KIND:SHA256(token)" is set only if absent (SET
// NX) and expires after ttl, so across every instance one call wins. The
// token itself is never stored. A spend is a write that must survive a
// failover (Client.write): when the replicas do not confirm it, it is an
// error, never a success.
func (c *Client) SpendOnce(ctx context.Context, kind, token string, ttl time.Duration) (bool, error) {
	ctx, cancel := c.ctx(ctx)
	defer cancel()
	res, err := c.write1(ctx, "spend "+kind, c.rd().B().Set().Key(c.onceKey(kind, token)).Value("1").Nx().Px(max(ttl, time.Millisecond)).Build())
	if rueidis.IsRedisNil(res.Error()) {
		// Spent before: refused, whatever the replicas say.
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return true, nil
}

// Spent reports whether token of kind was spent (SpendOnce) and has not
// expired, on any instance, without spending it.
func (c *Client) Spent(ctx context.Context, kind, token string) (bool, error) {
	ctx, cancel := c.ctx(ctx)
	defer cancel()
	n, err := c.rd().Do(ctx, c.rd().B().Exists().Key(c.onceKey(kind, token)).Build()).AsInt64()
	if err = c.result("check spent "+kind, err); err != nil {
		return false, err
	}
	return n == 1, nil
}

// onceKey is the key of token of kind: its SHA-256, never the token.
func (c *Client) onceKey(kind, token string) string {
	sum := sha256.Sum256([]byte(token))
	return c.key("once", kind, hex.EncodeToString(sum[:]))
}
