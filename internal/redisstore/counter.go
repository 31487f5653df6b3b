package redisstore

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"sync"
	"time"

	"github.com/redis/rueidis"

	"github.com/backupweb/backupweb/internal/throttle"
)

// maxKeyLen bounds a counted key as written in Redis: longer keys (a user
// name can be anything) are replaced by their SHA-256.
const maxKeyLen = 128

// SlotLease is how long Redis keeps the slot of an attempt in flight
// without hearing its verdict: an instance that stops (crashes, loses
// Redis) in the middle of a check holds that slot no longer than this. It
// is longer than throttle.MaxCheck, the deadline every check runs under,
// so a lease never runs out under a live check.
const SlotLease = throttle.MaxCheck + 5*time.Second

// Counter counts attempts in Redis with the rules of throttle.Limiter (a
// failure count draining at Max per Window, attempts in flight holding a
// slot each, a block at Max recorded failures that doubles for a key that
// keeps failing, up to MaxBlock), so that the limits hold however many
// instances share the server. Each operation is one script, atomic in
// Redis, on Redis's clock: instances' clocks do not matter.
//
// Layout, under the prefix: "t:NAME:{KEY}" is a hash per counted key
// (KEY escaped as tagUser does, so that the braces make it the key's hash
// tag) that expires when the key would be forgotten; "tl:NAME:{KEY}" the
// sorted set of
// the key's slots in flight by the end of their lease (SlotLease), which
// expires with the last lease; "tb:NAME" the sorted set of blocked keys
// by the end of their block, and "tk:NAME" the sorted set of counted keys
// by when they are forgotten, both for Clear and both expiring with their
// last member. A key's hash and its slots share the hash tag, so each
// script runs in one slot of a Redis Cluster; the two sets are written
// apart, after the script.
type Counter struct {
	c                                        *Client
	name                                     string
	interval, limit, window, block, maxBlock string // milliseconds
	max, lease                               string
	entryPrefix, leasePrefix, blocked, index string
	wait, maxWait                            time.Duration
	waiters                                  throttle.Notifier
	// now, when set (tests), replaces Redis's clock.
	now func() time.Time

	// mu guards written and full.
	mu sync.Mutex
	// written holds the keys whose entry this instance wrote (or may
	// have written) in the last endedMemory: Check runs its script for
	// them rather than trust a cached copy that Redis's invalidation
	// has not reached yet. full is when a key could last not be
	// remembered (written at maxDecoded): until endedMemory after it,
	// every Check runs the script.
	written map[string]time.Time
	full    time.Time
}

var _ throttle.Counter = (*Counter)(nil)

// pollEvery is how often an attempt waiting for a slot looks again, for
// slots given back on other instances; those given back on this one wake
// it at once.
const pollEvery = 20 * time.Millisecond

func newCounter(c *Client, name string, o throttle.Options) *Counter {
	// throttle.New fills the defaults and bounds; read them back from it.
	d := throttle.New(throttle.Options{Max: o.Max, Window: o.Window, Block: o.Block, MaxBlock: o.MaxBlock, Wait: o.Wait, MaxWait: o.MaxWait, MaxKeys: 1}).Settings()
	interval := max(d.Window/time.Duration(d.Max), time.Millisecond)
	return &Counter{
		c:           c,
		name:        name,
		interval:    millis(interval),
		limit:       millis(interval * time.Duration(d.Max)),
		window:      millis(d.Window),
		block:       millis(d.Block),
		maxBlock:    millis(d.MaxBlock),
		max:         strconv.Itoa(d.Max),
		lease:       millis(SlotLease),
		entryPrefix: c.key("t", name, ""),
		leasePrefix: c.key("tl", name, ""),
		blocked:     c.key("tb", name),
		index:       c.key("tk", name),
		wait:        d.Wait,
		maxWait:     d.MaxWait,
	}
}

func millis(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) }

// clock is the first argument of every script: empty for Redis's clock.
func (k *Counter) clock() string {
	if k.now == nil {
		return ""
	}
	return strconv.FormatInt(k.now().UnixMilli(), 10)
}

// entryLua opens every script: the time (ARGV[1], or Redis's clock), and
// load and state, throttle.Limiter's reading of a key's hash.
const entryLua = `local now
if ARGV[1] ~= '' then now = tonumber(ARGV[1]) else
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local function load(k)
  local h = redis.call('HMGET', k, 't', 'b', 's', 'r', 'f')
  local e = {tat = tonumber(h[1]) or 0, blocked = tonumber(h[2]) or 0, strikes = tonumber(h[3]) or 0,
    refused = tonumber(h[4]) or 0, forget = tonumber(h[5]) or 0}
  if now >= e.forget then e.tat, e.blocked, e.strikes, e.refused, e.forget = 0, 0, 0, 0, 0 end
  return e
end
local function state(k, e)
  if now < e.blocked then
    e.refused = e.refused + 1
    redis.call('HSET', k, 'r', e.refused)
    local first = 0
    if e.refused == 1 then first = 1 end
    return {0, e.blocked - now, first, 0}
  end
  local ended = e.refused
  if ended > 0 then
    e.refused = 0
    redis.call('HSET', k, 'r', 0)
  end
  return {1, 0, 0, ended}
end
`

// checkScript is throttle.Limiter.Check.
// KEYS: entry. ARGV: now. Returns {ok, retry after ms, first refusal, block ended}.
var checkScript = newScript(entryLua + `return state(KEYS[1], load(KEYS[1]))`)

// acquireScript is throttle.Limiter.TryAcquire.
// KEYS: entry, leases. ARGV: now, interval, max, lease ms, slot id.
// Returns {ok, retry after ms, first refusal, block ended, busy}.
var acquireScript = newScript(entryLua + `
local interval, max, lease = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local e = load(KEYS[1])
local s = state(KEYS[1], e)
if s[1] == 0 then return {0, s[2], s[3], 0, 0} end
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
local n = redis.call('ZCARD', KEYS[2])
if n >= max then return {0, 1000, 0, s[4], 1} end
local used, room = math.max(e.tat - now, 0), (max - 1 - n) * interval
if used > room then return {0, used - room, 0, s[4], 1} end
local till = now + lease
redis.call('ZADD', KEYS[2], till, ARGV[5])
if redis.call('PEXPIRETIME', KEYS[2]) < till then redis.call('PEXPIREAT', KEYS[2], till) end
return {1, 0, 0, s[4], 0}`)

// failScript is throttle.Limiter.Fail: the slot goes, a failure is
// recorded unless the key is blocked, and blocks it at the limit.
// KEYS: entry, leases. ARGV: now, interval, limit, window, block, max
// block, slot id. Returns {1 if it blocked, the block's end, when the
// key is forgotten, now} (0 for both ends when nothing was recorded).
var failScript = newScript(entryLua + `
local interval, limit, window = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local block, maxblock = tonumber(ARGV[5]), tonumber(ARGV[6])
redis.call('ZREM', KEYS[2], ARGV[7])
local e = load(KEYS[1])
if now < e.blocked then return {0, 0, 0, now} end
e.tat = math.max(e.tat, now) + interval
local started = 0
if e.tat - now > limit - interval then
  e.strikes = e.strikes + 1
  local d = block
  local i = 1
  while i < e.strikes and d < maxblock do d = d * 2; i = i + 1 end
  d = math.min(d, maxblock)
  e.blocked = now + d
  e.tat = now
  started = 1
end
e.forget = math.max(e.tat, e.blocked) + window
redis.call('HSET', KEYS[1], 't', e.tat, 'b', e.blocked, 's', e.strikes, 'r', e.refused, 'f', e.forget)
redis.call('PEXPIREAT', KEYS[1], e.forget)
local till = 0
if started == 1 then till = e.blocked end
return {started, till, e.forget, now}`)

// noteScript adds a member to one of the sets of a counter (blocked
// keys, counted keys) until a time, dropping members past ARGV[4] when
// it is not empty. KEYS: set. ARGV: score, member, expiry, drop before.
var noteScript = newScript(`
if ARGV[4] ~= '' then redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[4]) end
redis.call('ZADD', KEYS[1], ARGV[1], ARGV[2])
if redis.call('PEXPIRETIME', KEYS[1]) < tonumber(ARGV[3]) then redis.call('PEXPIREAT', KEYS[1], ARGV[3]) end
return 1`)

// Check reports whether key is blocked, taking no slot (see
// throttle.Limiter.Check). It runs on every request with a machine
// token, so a key that has never been blocked is answered from the
// client-side cache: an entry without a block and without refusals
// (no entry at all, or "b" and "r" 0) is one for which checkScript
// writes nothing and answers OK. Any other entry, and a key this
// instance wrote a moment ago (see written), goes to the script, which
// decides on Redis's clock and records the refusal. A block set on
// another instance reaches this one's cache with Redis's invalidation;
// until then a wrong token is still refused by the block, since a
// failure takes a slot through acquireScript, which reads Redis.
func (k *Counter) Check(ctx context.Context, key string) (throttle.Verdict, error) {
	key = normalise(key)
	c := k.c
	ctx, cancel := c.ctx(ctx)
	defer cancel()
	if !k.writtenHere(key) {
		rd := c.rd()
		vals, err := rd.DoCache(ctx, rd.B().Hmget().Key(k.entry(key)).Field("b", "r").Cache(), cacheTTL).ToArray()
		if err = c.result("check attempts", err); err != nil {
			return throttle.Verdict{}, err
		}
		if len(vals) == 2 && unset(vals[0]) && unset(vals[1]) {
			return throttle.Verdict{OK: true}, nil
		}
	}
	res, err := checkScript.exec(ctx, c, []string{k.entry(key)}, []string{k.clock()}).AsIntSlice()
	if err = c.result("check attempts", err); err != nil {
		return throttle.Verdict{}, err
	}
	if len(res) != 4 {
		return throttle.Verdict{}, &Error{Op: "check attempts", Err: errBadReply}
	}
	if res[0] == 0 || res[3] > 0 {
		// The script recorded the refusal, or that a block ended.
		k.wrote(key)
	}
	if res[0] == 0 {
		return throttle.Verdict{RetryAfter: time.Duration(res[1]) * time.Millisecond, FirstRefusal: res[2] == 1}, nil
	}
	return throttle.Verdict{OK: true, BlockEnded: int(res[3])}, nil
}

// unset reports whether v, a field of a counted key's hash, is absent
// or 0.
func unset(v rueidis.RedisMessage) bool {
	if v.IsNil() {
		return true
	}
	s, err := v.ToString()
	return err == nil && s == "0"
}

// writtenHere reports whether this instance wrote key's entry in the
// last endedMemory, or could not remember whether it did.
func (k *Counter) writtenHere(key string) bool {
	now := time.Now()
	k.mu.Lock()
	defer k.mu.Unlock()
	if now.Sub(k.full) < endedMemory {
		return true
	}
	at, ok := k.written[key]
	return ok && now.Sub(at) < endedMemory
}

// wrote remembers that this instance wrote key's entry now.
func (k *Counter) wrote(key string) {
	now := time.Now()
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.written == nil {
		k.written = make(map[string]time.Time)
	}
	if _, ok := k.written[key]; !ok && len(k.written) >= maxDecoded {
		for w, at := range k.written {
			if now.Sub(at) >= endedMemory {
				delete(k.written, w)
			}
		}
		if len(k.written) >= maxDecoded {
			k.full = now
			return
		}
	}
	k.written[key] = now
}

// Acquire takes a slot of key for an attempt, with a lease of SlotLease,
// waiting for one as throttle.Limiter.Acquire does: woken at once by slots
// given back on this instance, looking again every pollEvery for those
// given back elsewhere.
func (k *Counter) Acquire(ctx context.Context, key string) (throttle.Verdict, error) {
	key = normalise(key)
	return throttle.Await(ctx, &k.waiters, key, k.wait, k.maxWait, pollEvery, func() (throttle.Verdict, error) {
		return k.tryAcquire(ctx, key)
	})
}

func (k *Counter) tryAcquire(ctx context.Context, key string) (throttle.Verdict, error) {
	id := rand.Text()
	c := k.c
	cctx, cancel := c.ctx(ctx)
	defer cancel()
	res, err := acquireScript.exec(cctx, c, []string{k.entry(key), k.leases(key)},
		[]string{k.clock(), k.interval, k.max, k.lease, id}).AsIntSlice()
	if err = c.result("count attempt", err); err != nil {
		return throttle.Verdict{}, err
	}
	if len(res) != 5 {
		return throttle.Verdict{}, &Error{Op: "count attempt", Err: errBadReply}
	}
	v := throttle.Verdict{OK: res[0] == 1, RetryAfter: time.Duration(res[1]) * time.Millisecond,
		FirstRefusal: res[2] == 1, BlockEnded: int(res[3]), Busy: res[4] == 1}
	if !v.OK && !v.Busy || v.BlockEnded > 0 {
		// The script recorded the refusal, or that a block ended.
		k.wrote(key)
	}
	if v.OK {
		v.Slot = throttle.Slot{Key: key, ID: id}
	}
	return v, nil
}

// Release gives back the slot s (see throttle.Limiter.Release). A lease
// that ran out meanwhile has nothing left to give back.
func (k *Counter) Release(ctx context.Context, s throttle.Slot) error {
	if !s.Held() {
		return nil
	}
	defer k.waiters.Wake(s.Key)
	c := k.c
	ctx, cancel := c.ctx(ctx)
	defer cancel()
	err := c.rd().Do(ctx, c.rd().B().Zrem().Key(k.leases(s.Key)).Member(s.ID).Build()).Error()
	return c.result("give back an attempt", err)
}

// Fail records the failure of the attempt holding s (see
// throttle.Limiter.Fail): recorded even if its lease ran out, since it is
// a verdict all the same.
func (k *Counter) Fail(ctx context.Context, s throttle.Slot) (bool, error) {
	if !s.Held() {
		return false, nil
	}
	defer k.waiters.Wake(s.Key)
	k.wrote(s.Key)
	c := k.c
	ctx, cancel := c.ctx(ctx)
	defer cancel()
	res, err := failScript.exec(ctx, c, []string{k.entry(s.Key), k.leases(s.Key)},
		[]string{k.clock(), k.interval, k.limit, k.window, k.block, k.maxBlock, s.ID}).AsIntSlice()
	if err = c.result("count failure", err); err != nil {
		return false, err
	}
	if len(res) != 4 {
		return false, &Error{Op: "count failure", Err: errBadReply}
	}
	if res[2] == 0 {
		return false, nil
	}
	// The sets Clear reads: the key's block and when it is forgotten.
	till, forget, now := strconv.FormatInt(res[1], 10), strconv.FormatInt(res[2], 10), strconv.FormatInt(res[3], 10)
	cmds := rueidis.Commands{noteScript.cmd(c, []string{k.index}, []string{forget, s.Key, forget, now})}
	if res[0] == 1 {
		cmds = append(cmds, noteScript.cmd(c, []string{k.blocked}, []string{till, s.Key, till, ""}))
	}
	if err := c.firstError("count failure", c.rd().DoMulti(ctx, cmds...)); err != nil {
		return false, err
	}
	return res[0] == 1, nil
}

// Reset forgets key's failures and blocks; its slots in flight stay.
func (k *Counter) Reset(ctx context.Context, key string) error {
	key = normalise(key)
	defer k.waiters.Wake(key)
	c := k.c
	ctx, cancel := c.ctx(ctx)
	defer cancel()
	for _, r := range c.rd().DoMulti(ctx,
		c.rd().B().Del().Key(k.entry(key)).Build(),
		c.rd().B().Zrem().Key(k.blocked).Member(key).Build(),
		c.rd().B().Zrem().Key(k.index).Member(key).Build()) {
		if err := c.result("forget failures", r.Error()); err != nil {
			return err
		}
	}
	return nil
}

// Clear lifts every block and forgets every count, on every instance, and
// returns how many blocks it lifted.
func (k *Counter) Clear(ctx context.Context) (int, error) {
	defer k.waiters.WakeAll()
	c := k.c
	ctx, cancel := c.ctx(ctx)
	defer cancel()
	now := k.clock()
	if now == "" {
		t, err := c.rd().Do(ctx, c.rd().B().Time().Build()).AsStrSlice()
		if err = c.result("lift blocks and counts", err); err != nil {
			return 0, err
		}
		var sec, usec int64
		var err1, err2 error
		if len(t) == 2 {
			sec, err1 = strconv.ParseInt(t[0], 10, 64)
			usec, err2 = strconv.ParseInt(t[1], 10, 64)
		}
		if len(t) != 2 || err1 != nil || err2 != nil {
			return 0, &Error{Op: "lift blocks and counts", Err: errBadReply}
		}
		now = strconv.FormatInt(sec*1000+usec/1000, 10)
	}
	res := c.rd().DoMulti(ctx,
		c.rd().B().Zcount().Key(k.blocked).Min("("+now).Max("+inf").Build(),
		c.rd().B().Zrange().Key(k.index).Min("0").Max("-1").Build())
	n, err := res[0].AsInt64()
	if err = c.result("lift blocks and counts", err); err != nil {
		return 0, err
	}
	members, err := res[1].AsStrSlice()
	if err = c.result("lift blocks and counts", err); err != nil {
		return 0, err
	}
	cmds := make(rueidis.Commands, 0, len(members)+2)
	for _, m := range members {
		cmds = append(cmds, c.rd().B().Del().Key(k.entry(m)).Build())
	}
	cmds = append(cmds, c.rd().B().Del().Key(k.blocked).Build(), c.rd().B().Del().Key(k.index).Build())
	return int(n), c.firstError("lift blocks and counts", c.rd().DoMulti(ctx, cmds...))
}

// InFlight returns the number of live slots of key (for tests and
// diagnostics).
func (k *Counter) InFlight(ctx context.Context, key string) (int, error) {
	key = normalise(key)
	c := k.c
	ctx, cancel := c.ctx(ctx)
	defer cancel()
	min := "(" + k.clock()
	if k.now == nil {
		min = "(" + strconv.FormatInt(time.Now().UnixMilli(), 10)
	}
	n, err := c.rd().Do(ctx, c.rd().B().Zcount().Key(k.leases(key)).Min(min).Max("+inf").Build()).AsInt64()
	return int(n), c.result("count attempts in flight", err)
}

// entry is the key of key's hash, and leases that of its slots: both
// under key's hash tag.
func (k *Counter) entry(key string) string  { return k.entryPrefix + tagUser(key) }
func (k *Counter) leases(key string) string { return k.leasePrefix + tagUser(key) }

// normalise bounds the size of a key.
func normalise(key string) string {
	if len(key) <= maxKeyLen {
		return key
	}
	sum := sha256.Sum256([]byte(key))
	return "sha256." + hex.EncodeToString(sum[:])
}
