package redisstore

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/redis/rueidis"
)

// The ACME certificate store (acmecert.Store), under the prefix:
//
//	acme:NAME       a record of autocert's cache (a certificate with its
//	                key, the account key, a challenge), sealed by
//	                acmecert.SharedCache: Redis never sees a private key
//	acme-lock:NAME  the token of the instance ordering NAME, with an
//	                expiry (set by a script when free or the same token's)
//
// Each command touches one key, so any of them runs on a Redis Cluster.

func (c *Client) acmeKey(name string) string     { return c.key("acme", name) }
func (c *Client) acmeLockKey(name string) string { return c.key("acme-lock", name) }

// ACMEGet returns the record of name, nil when there is none.
func (c *Client) ACMEGet(ctx context.Context, name string) ([]byte, error) {
	ctx, cancel := c.ctx(ctx)
	defer cancel()
	b, err := c.rd().Do(ctx, c.rd().B().Get().Key(c.acmeKey(name)).Build()).AsBytes()
	if rueidis.IsRedisNil(err) {
		c.observe(nil)
		return nil, nil
	}
	if err = c.result("read ACME record", err); err != nil {
		return nil, err
	}
	return b, nil
}

// ACMEPut stores val as the record of name, expiring after ttl (zero:
// never). It is a write that must survive a failover (Client.write).
func (c *Client) ACMEPut(ctx context.Context, name string, val []byte, ttl time.Duration) error {
	ctx, cancel := c.ctx(ctx)
	defer cancel()
	cmd := c.rd().B().Set().Key(c.acmeKey(name)).Value(rueidis.BinaryString(val)).Build()
	if ttl > 0 {
		cmd = c.rd().B().Set().Key(c.acmeKey(name)).Value(rueidis.BinaryString(val)).Px(ttl).Build()
	}
	_, err := c.write1(ctx, "store ACME record", cmd)
	return err
}

// ACMEDelete removes the record of name.
func (c *Client) ACMEDelete(ctx context.Context, name string) error {
	ctx, cancel := c.ctx(ctx)
	defer cancel()
	err := c.rd().Do(ctx, c.rd().B().Del().Key(c.acmeKey(name)).Build()).Error()
	return c.result("delete ACME record", err)
}

// ACMENames lists the names of every ACME record (rotate-secret reseals
// them).
func (c *Client) ACMENames(ctx context.Context) ([]string, error) {
	keys, err := c.scan(ctx, escapeGlob(c.acmeKey(""))+"*")
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(keys))
	for _, k := range keys {
		names = append(names, strings.TrimPrefix(k, c.acmeKey("")))
	}
	return names, nil
}

// escapeGlob escapes the pattern characters of SCAN's MATCH in s.
func escapeGlob(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[]\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// lockScript takes the lock of KEYS[1] for ARGV[1] (a token) for ARGV[2]
// milliseconds when it is free or already ARGV[1]'s: 1 when taken, 0 when
// another token holds it.
var lockScript = newScript(`local v = redis.call('GET', KEYS[1])
if v and v ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1`)

// ACMELock takes the ordering lock of name with token for ttl unless
// another token holds it, and reports whether it did; taken again by the
// same token, its time starts again.
func (c *Client) ACMELock(ctx context.Context, name, token string, ttl time.Duration) (bool, error) {
	ctx, cancel := c.ctx(ctx)
	defer cancel()
	ms := strconv.FormatInt(max(ttl, time.Millisecond).Milliseconds(), 10)
	res, err := c.write1(ctx, "take ACME lock", lockScript.cmd(c, []string{c.acmeLockKey(name)}, []string{token, ms}))
	if err != nil {
		return false, err
	}
	n, err := res.AsInt64()
	if err = c.result("take ACME lock", err); err != nil {
		return false, err
	}
	return n == 1, nil
}

// unlockScript deletes the lock only if it still holds the caller's
// token: a lock that ran out and was taken by another stays theirs.
var unlockScript = newScript(`if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`)

// ACMEUnlock releases the ordering lock of name if token holds it.
func (c *Client) ACMEUnlock(ctx context.Context, name, token string) error {
	ctx, cancel := c.ctx(ctx)
	defer cancel()
	err := unlockScript.exec(ctx, c, []string{c.acmeLockKey(name)}, []string{token}).Error()
	return c.result("release ACME lock", err)
}
