package redisstore

import (
	"context"
	"time"
)

// Mark records id of kind for ttl ("mark:KIND:ID", which expires), for
// every instance: what a type remembers across restarts and instances
// that is neither a session nor a spent token (basic's known addresses).
// Ids are keyed hashes chosen by the caller, never a secret.
func (c *Client) Mark(ctx context.Context, kind, id string, ttl time.Duration) error {
	ctx, cancel := c.ctx(ctx)
	defer cancel()
	err := c.rd().Do(ctx, c.rd().B().Set().Key(c.key("mark", kind, id)).Value("1").Px(max(ttl, time.Millisecond)).Build()).Error()
	return c.result("mark "+kind, err)
}

// Marked reports whether id of kind is recorded (Mark) and has not
// expired, on any instance.
func (c *Client) Marked(ctx context.Context, kind, id string) (bool, error) {
	ctx, cancel := c.ctx(ctx)
	defer cancel()
	n, err := c.rd().Do(ctx, c.rd().B().Exists().Key(c.key("mark", kind, id)).Build()).AsInt64()
	if err = c.result("check mark "+kind, err); err != nil {
		return false, err
	}
	return n > 0, nil
}
