package redisstore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"time"

	"github.com/redis/rueidis"

	"github.com/backupweb/backupweb/throttle"
)

// maxKeyLen bounds a counted key as written in Redis: longer keys (a user
// name can be anything) are replaced by their SHA-256.
const maxKeyLen = 128

// Counter counts failures in Redis with the rules of throttle.Limiter (a
// count draining at Max per Window, a block at Max that doubles for a key
// that keeps failing, up to MaxBlock), so that the limits hold however
// many instances share the server. Each operation is one script, atomic
// in Redis, on Redis's clock: instances' clocks do not matter.
//
// Layout, under the prefix: "t:NAME:KEY" is a hash per counted key that
// expires when the key would be forgotten; "tb:NAME" is the sorted set of
// blocked keys by the end of their block, for ClearBlocks, which expires
// with the last block.
type Counter struct {
	c                                        *Client
	name                                     string
	interval, limit, window, block, maxBlock string // milliseconds
	entryPrefix, blocked                     string
}

var _ throttle.Counter = (*Counter)(nil)

func newCounter(c *Client, name string, o throttle.Options) *Counter {
	// throttle.New fills the defaults and bounds; read them back from it.
	d := throttle.New(throttle.Options{Max: o.Max, Window: o.Window, Block: o.Block, MaxBlock: o.MaxBlock, MaxKeys: 1}).Settings()
	interval := max(d.Window/time.Duration(d.Max), time.Millisecond)
	return &Counter{
		c:           c,
		name:        name,
		interval:    millis(interval),
		limit:       millis(interval * time.Duration(d.Max)),
		window:      millis(d.Window),
		block:       millis(d.Block),
		maxBlock:    millis(d.MaxBlock),
		entryPrefix: c.key("t", name, ""),
		blocked:     c.key("tb", name),
	}
}

func millis(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) }

// nowLua reads Redis's clock in milliseconds.
const nowLua = `local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
`

// reserveScript is throttle.Limiter.Reserve on a hash.
// KEYS: entry, blocked set. ARGV: interval, limit, window, block, max block, member.
// Returns {ok, retry after ms, first refusal, block ended, started block}.
var reserveScript = rueidis.NewLuaScript(nowLua + `
local interval, limit, window = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local block, maxblock = tonumber(ARGV[4]), tonumber(ARGV[5])
local h = redis.call('HMGET', KEYS[1], 't', 'b', 's', 'r', 'f')
local tat, blocked = tonumber(h[1]) or 0, tonumber(h[2]) or 0
local strikes, refused, forget = tonumber(h[3]) or 0, tonumber(h[4]) or 0, tonumber(h[5]) or 0
if now < blocked then
  refused = refused + 1
  redis.call('HSET', KEYS[1], 'r', refused)
  local first = 0
  if refused == 1 then first = 1 end
  return {0, blocked - now, first, 0, 0}
end
local ended = refused
if h[1] and now >= forget then tat, blocked, strikes = 0, 0, 0 end
tat = math.max(tat, now) + interval
local started = 0
if tat - now > limit - interval then
  strikes = strikes + 1
  local d = block
  local i = 1
  while i < strikes and d < maxblock do d = d * 2; i = i + 1 end
  d = math.min(d, maxblock)
  blocked = now + d
  tat = now
  started = 1
  redis.call('ZADD', KEYS[2], blocked, ARGV[6])
  if redis.call('PEXPIRETIME', KEYS[2]) < blocked then redis.call('PEXPIREAT', KEYS[2], blocked) end
end
forget = math.max(tat, blocked) + window
redis.call('HSET', KEYS[1], 't', tat, 'b', blocked, 's', strikes, 'r', 0, 'f', forget)
redis.call('PEXPIREAT', KEYS[1], forget)
return {1, 0, 0, ended, started}`)

// Reserve counts an attempt by key ahead of its check (see
// throttle.Limiter.Reserve).
func (k *Counter) Reserve(ctx context.Context, key string) (throttle.Verdict, error) {
	key = normalise(key)
	c := k.c
	ctx, cancel := c.ctx(ctx)
	defer cancel()
	res, err := reserveScript.Exec(ctx, c.rd, []string{k.entryPrefix + key, k.blocked},
		[]string{k.interval, k.limit, k.window, k.block, k.maxBlock, key}).AsIntSlice()
	if err = c.result("count failure", err); err != nil {
		return throttle.Verdict{}, err
	}
	if len(res) != 5 {
		return throttle.Verdict{}, &Error{Op: "count failure", Err: errBadReply}
	}
	if res[0] == 0 {
		return throttle.Verdict{RetryAfter: time.Duration(res[1]) * time.Millisecond, FirstRefusal: res[2] == 1}, nil
	}
	return throttle.Verdict{OK: true, BlockEnded: int(res[3]), Key: key, StartedBlock: res[4] == 1}, nil
}

// releaseScript is throttle.Limiter.Release on a hash.
// KEYS: entry, blocked set. ARGV: interval, limit, window, started block, member.
var releaseScript = rueidis.NewLuaScript(nowLua + `
local interval, limit, window = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local h = redis.call('HMGET', KEYS[1], 't', 'b', 's')
if not h[1] then return 0 end
local tat, blocked, strikes = tonumber(h[1]), tonumber(h[2]), tonumber(h[3])
if ARGV[4] == '1' and now < blocked then
  blocked = now
  strikes = math.max(strikes - 1, 0)
  tat = now + limit - interval
  redis.call('ZREM', KEYS[2], ARGV[5])
else
  tat = math.max(now, tat - interval)
end
local forget = math.max(tat, blocked) + window
redis.call('HSET', KEYS[1], 't', tat, 'b', blocked, 's', strikes, 'f', forget)
redis.call('PEXPIREAT', KEYS[1], forget)
return 1`)

// Release takes back the attempt of a verdict that succeeded.
func (k *Counter) Release(ctx context.Context, v throttle.Verdict) error {
	if !v.OK || v.Key == "" {
		return nil
	}
	started := "0"
	if v.StartedBlock {
		started = "1"
	}
	c := k.c
	ctx, cancel := c.ctx(ctx)
	defer cancel()
	err := releaseScript.Exec(ctx, c.rd, []string{k.entryPrefix + v.Key, k.blocked},
		[]string{k.interval, k.limit, k.window, started, v.Key}).Error()
	return c.result("release failure", err)
}

// Reset forgets key entirely, past blocks included.
func (k *Counter) Reset(ctx context.Context, key string) error {
	key = normalise(key)
	c := k.c
	ctx, cancel := c.ctx(ctx)
	defer cancel()
	err := c.rd.DoMulti(ctx,
		c.rd.B().Del().Key(k.entryPrefix+key).Build(),
		c.rd.B().Zrem().Key(k.blocked).Member(key).Build())[0].Error()
	return c.result("forget failures", err)
}

// clearScript lifts every block.
// KEYS: blocked set. ARGV: entry prefix.
var clearScript = rueidis.NewLuaScript(nowLua + `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local n = 0
for _, m in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  n = n + redis.call('DEL', ARGV[1] .. m)
end
redis.call('DEL', KEYS[1])
return n`)

// ClearBlocks lifts every block, on every instance, and returns how many.
func (k *Counter) ClearBlocks(ctx context.Context) (int, error) {
	c := k.c
	ctx, cancel := c.ctx(ctx)
	defer cancel()
	n, err := clearScript.Exec(ctx, c.rd, []string{k.blocked}, []string{k.entryPrefix}).AsInt64()
	return int(n), c.result("lift blocks", err)
}

// normalise bounds the size of a key.
func normalise(key string) string {
	if len(key) <= maxKeyLen {
		return key
	}
	sum := sha256.Sum256([]byte(key))
	return "sha256." + hex.EncodeToString(sum[:])
}
