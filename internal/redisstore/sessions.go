package redisstore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/rueidis"

	"github.com/backupweb/backupweb/internal/session"
)

// Store is a session.Store in Redis, with Toucher, UserDeleter,
// UserLimiter and Pinger.
//
// Layout, under the prefix: "s:KEY" is a hash per session (KEY is the
// manager's keyed hash of the session id, never the id) holding the
// record ("r", JSON), its user ("u"), last activity ("l") and deadline
// ("e", Unix milliseconds) and the record's MAC ("m", which covers the
// activity and the deadline too, so Touch rewrites it with them); the key
// expires at the deadline. The store does not check the MAC: the session
// manager does, at every read, whatever Redis's TTL says. "u:USER" is
// a sorted set of USER's session keys by creation time, which expires
// with the last of them: what the listings and max_sessions_per_user
// count. Each change is one script, so the index and the sessions never
// disagree, and the session manager refuses a session the index does not
// name (Indexed: taken out by hand), which could otherwise escape the
// count. Ending a user's
// sessions does not depend on the index: "g:USER" is the user's
// generation (session.Generations).
type Store struct {
	c *Client

	// decoded remembers the last record decoded per key with the exact
	// text it was decoded from, so that a read answered from the cache
	// is not decoded again: the text still comes from Redis (or from the
	// cache Redis invalidates), and only an identical text reuses the
	// decoding. Bounded by maxDecoded; emptied when full.
	mu      sync.Mutex
	decoded map[string]decodedRecord
	// ended holds the keys this instance ended in the last endedMemory:
	// Find refuses them without asking the cache, so that a session ended
	// here is refused here at once, whenever Redis's invalidation of the
	// cached copy arrives (on other instances, it is what refuses them).
	ended map[string]time.Time
	// floor holds the generations this instance moved users to, which
	// UserGeneration never goes below (bounded by maxDecoded: emptied
	// when full, after which the cached value, invalidated by then,
	// answers).
	floor map[string]uint64
}

// maxDecoded bounds Store.decoded and Store.ended.
const maxDecoded = 10_000

// endedMemory is how long Store.ended remembers a key: far longer than
// an invalidation takes to arrive.
const endedMemory = 10 * time.Second

type decodedRecord struct {
	raw string
	rec session.Record
}

var (
	_ session.Store       = (*Store)(nil)
	_ session.Toucher     = (*Store)(nil)
	_ session.UserDeleter = (*Store)(nil)
	_ session.UserLimiter = (*Store)(nil)
	_ session.Pinger      = (*Store)(nil)
	_ session.Generations = (*Store)(nil)
	_ session.Indexer     = (*Store)(nil)
)

// Find reads the record under key, from the client-side cache while Redis
// has not invalidated it.
func (s *Store) Find(ctx context.Context, key string) (session.Record, bool, error) {
	if s.endedHere(key) {
		return session.Record{}, false, nil
	}
	c := s.c
	ctx, cancel := c.ctx(ctx)
	defer cancel()
	vals, err := c.rd.DoCache(ctx, c.rd.B().Hmget().Key(c.key("s", key)).Field("r", "l", "e", "m").Cache(), cacheTTL).ToArray()
	if err = c.result("find session", err); err != nil {
		return session.Record{}, false, err
	}
	if len(vals) != 4 || vals[0].IsNil() {
		return session.Record{}, false, nil
	}
	raw, err0 := vals[0].ToString()
	l, err1 := vals[1].AsInt64()
	e, err2 := vals[2].AsInt64()
	var mac string
	if !vals[3].IsNil() {
		mac, _ = vals[3].ToString()
	}
	if err0 != nil || err1 != nil || err2 != nil {
		return session.Record{}, false, &Error{Op: "find session", Err: errors.New("stored record has no valid times")}
	}
	rec, err := s.decode(key, raw)
	if err != nil {
		return session.Record{}, false, &Error{Op: "find session", Err: errors.New("stored record is not valid JSON")}
	}
	last, exp := l, e
	rec.LastSeen, rec.Expires, rec.MAC = time.UnixMilli(last), time.UnixMilli(exp), []byte(mac)
	if !time.Now().Before(rec.Expires) {
		return session.Record{}, false, nil
	}
	return rec, true, nil
}

// Indexed reports whether username's index names the session under key
// (session.Indexer). Every script that writes a session indexes it in the
// same step, and every one that ends it removes both, so a live session
// its index does not name was taken out of it by hand, or the index was
// lost: the manager refuses it, so that it can neither escape
// max_sessions_per_user (which counts the index) nor hide from the
// account page and `session list`. Read through the client-side cache,
// like the record.
func (s *Store) Indexed(ctx context.Context, key, username string) (bool, error) {
	c := s.c
	ctx, cancel := c.ctx(ctx)
	defer cancel()
	_, err := c.rd.DoCache(ctx, c.rd.B().Zscore().Key(c.key("u", username)).Member(key).Cache(), cacheTTL).AsFloat64()
	if err = c.result("read a user's index", err); rueidis.IsRedisNil(err) {
		return false, nil
	}
	return err == nil, err
}

// decode returns the record raw holds, a copy the caller may modify.
func (s *Store) decode(key, raw string) (session.Record, error) {
	s.mu.Lock()
	d, ok := s.decoded[key]
	s.mu.Unlock()
	if ok && d.raw == raw {
		return cloneRecord(d.rec), nil
	}
	var rec session.Record
	if err := json.Unmarshal([]byte(raw), &rec); err != nil {
		return session.Record{}, err
	}
	s.mu.Lock()
	if s.decoded == nil || len(s.decoded) >= maxDecoded {
		s.decoded = make(map[string]decodedRecord)
	}
	s.decoded[key] = decodedRecord{raw: raw, rec: cloneRecord(rec)}
	s.mu.Unlock()
	return rec, nil
}

// endedHere reports whether this instance ended key a moment ago.
func (s *Store) endedHere(key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	at, ok := s.ended[key]
	return ok && time.Since(at) < endedMemory
}

// forget drops the decoded records of keys and remembers that they ended.
func (s *Store) forget(keys ...string) {
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended == nil {
		s.ended = make(map[string]time.Time)
	}
	if len(s.ended)+len(keys) > maxDecoded {
		for k, at := range s.ended {
			if now.Sub(at) >= endedMemory {
				delete(s.ended, k)
			}
		}
	}
	for _, k := range keys {
		delete(s.decoded, k)
		if len(s.ended) < maxDecoded {
			s.ended[k] = now
		}
	}
}

// cloneRecord returns a copy of r that shares no map or slice with it.
func cloneRecord(r session.Record) session.Record {
	r.Attrs = maps.Clone(r.Attrs)
	r.CSRF = bytes.Clone(r.CSRF)
	return r
}

// commitScript writes a session and indexes it under its user.
// KEYS: session, index. ARGV: record, user, last seen, deadline, created, key, MAC.
var commitScript = rueidis.NewLuaScript(`
redis.call('HSET', KEYS[1], 'r', ARGV[1], 'u', ARGV[2], 'l', ARGV[3], 'e', ARGV[4], 'm', ARGV[7])
redis.call('PEXPIREAT', KEYS[1], ARGV[4])
redis.call('ZADD', KEYS[2], ARGV[5], ARGV[6])
if redis.call('PEXPIRETIME', KEYS[2]) < tonumber(ARGV[4]) then
  redis.call('PEXPIREAT', KEYS[2], ARGV[4])
end
return 1`)

// Commit writes rec under key, expiring at rec.Expires, and indexes it
// under its user.
func (s *Store) Commit(ctx context.Context, key string, rec session.Record) error {
	if rec.Expires.IsZero() {
		return errors.New("redisstore: record has no expiry time")
	}
	mac := rec.MAC
	rec.MAC = nil // kept in its own field, which Touch rewrites
	body, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	c := s.c
	ctx, cancel := c.ctx(ctx)
	defer cancel()
	err = commitScript.Exec(ctx, c.rd,
		[]string{c.key("s", key), c.key("u", rec.Username)},
		[]string{string(body), rec.Username, ms(rec.LastSeen), ms(rec.Expires), ms(rec.Created), key, string(mac)}).Error()
	return c.result("commit session", err)
}

// touchScript refreshes an existing session's activity and deadline, and
// its index's; it never creates a session.
// KEYS: session. ARGV: last seen, deadline, index prefix, MAC.
var touchScript = rueidis.NewLuaScript(`
local u = redis.call('HGET', KEYS[1], 'u')
if not u then return 0 end
redis.call('HSET', KEYS[1], 'l', ARGV[1], 'e', ARGV[2], 'm', ARGV[4])
redis.call('PEXPIREAT', KEYS[1], ARGV[2])
local idx = ARGV[3] .. u
if redis.call('PEXPIRETIME', idx) < tonumber(ARGV[2]) then
  redis.call('PEXPIREAT', idx, ARGV[2])
end
return 1`)

// Touch sets the activity, deadline and MAC of the session under key, if
// it still exists.
func (s *Store) Touch(ctx context.Context, key string, lastSeen, expires time.Time, mac []byte) error {
	c := s.c
	ctx, cancel := c.ctx(ctx)
	defer cancel()
	err := touchScript.Exec(ctx, c.rd, []string{c.key("s", key)}, []string{ms(lastSeen), ms(expires), c.key("u", ""), string(mac)}).Error()
	return c.result("touch session", err)
}

// deleteScript removes a session and its index entry.
// KEYS: session. ARGV: index prefix, key.
var deleteScript = rueidis.NewLuaScript(`
local u = redis.call('HGET', KEYS[1], 'u')
redis.call('DEL', KEYS[1])
if u then redis.call('ZREM', ARGV[1] .. u, ARGV[2]) end
return 1`)

// Delete removes the session under key; an unknown key is not an error.
func (s *Store) Delete(ctx context.Context, key string) error {
	s.forget(key)
	c := s.c
	ctx, cancel := c.ctx(ctx)
	defer cancel()
	err := deleteScript.Exec(ctx, c.rd, []string{c.key("s", key)}, []string{c.key("u", ""), key}).Error()
	return c.result("delete session", err)
}

// deleteUserScript moves a user's generation forward, then removes every
// session the user's index names, and the index.
// KEYS: index, generation. ARGV: session prefix.
// Returns the new generation, then the keys of the sessions it ended.
var deleteUserScript = rueidis.NewLuaScript(`
local out = {tostring(redis.call('INCR', KEYS[2]))}
for _, k in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  if redis.call('DEL', ARGV[1] .. k) == 1 then table.insert(out, k) end
end
redis.call('DEL', KEYS[1])
return out`)

// DeleteUser moves username's generation forward ("g:USER", which never
// expires), so that every session made before is refused whether or not
// the index names it, then removes the sessions the index names, and
// returns how many it removed.
func (s *Store) DeleteUser(ctx context.Context, username string) (int, error) {
	c := s.c
	ctx, cancel := c.ctx(ctx)
	defer cancel()
	out, err := deleteUserScript.Exec(ctx, c.rd, []string{c.key("u", username), c.key("g", username)}, []string{c.key("s", "")}).AsStrSlice()
	if err = c.result("delete a user's sessions", err); err != nil {
		return 0, err
	}
	if len(out) == 0 {
		return 0, &Error{Op: "delete a user's sessions", Err: errors.New("the script gave no generation")}
	}
	g, err := strconv.ParseUint(out[0], 10, 64)
	if err != nil {
		return 0, &Error{Op: "delete a user's sessions", Err: fmt.Errorf("the generation %q is not a number", out[0])}
	}
	s.raiseGeneration(username, g)
	s.forget(out[1:]...)
	return len(out) - 1, nil
}

// UserGeneration returns username's generation (session.Generations):
// "g:USER", read through the client-side cache, which Redis invalidates
// when another instance or a command moves it; never less than what this
// instance moved it to itself, whenever that invalidation arrives. A
// value that is not a number is an error: refused, never taken for 0.
func (s *Store) UserGeneration(ctx context.Context, username string) (uint64, error) {
	c := s.c
	cctx, cancel := c.ctx(ctx)
	defer cancel()
	v, err := c.rd.DoCache(cctx, c.rd.B().Get().Key(c.key("g", username)).Cache(), cacheTTL).ToString()
	var g uint64
	switch {
	case rueidis.IsRedisNil(err):
		c.observe(nil)
	case err != nil:
		return 0, c.result("read a user's generation", err)
	default:
		c.observe(nil)
		if g, err = strconv.ParseUint(v, 10, 64); err != nil {
			return 0, &Error{Op: "read a user's generation", Err: errors.New("the stored generation is not a number")}
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return max(g, s.floor[username]), nil
}

// raiseGeneration remembers that this instance moved username's
// generation to g.
func (s *Store) raiseGeneration(username string, g uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.floor == nil || len(s.floor) >= maxDecoded {
		s.floor = make(map[string]uint64)
	}
	s.floor[username] = max(g, s.floor[username])
}

// limitUserScript drops index entries of sessions that have ended, then
// removes the oldest sessions beyond keep, and returns their keys.
// KEYS: index. ARGV: session prefix, keep.
var limitUserScript = rueidis.NewLuaScript(`
local live = {}
for _, k in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  if redis.call('EXISTS', ARGV[1] .. k) == 1 then
    table.insert(live, k)
  else
    redis.call('ZREM', KEYS[1], k)
  end
end
local ended = {}
for i = 1, #live - tonumber(ARGV[2]) do
  redis.call('DEL', ARGV[1] .. live[i])
  redis.call('ZREM', KEYS[1], live[i])
  table.insert(ended, live[i])
end
return ended`)

// LimitUser ends the oldest sessions of username beyond keep.
func (s *Store) LimitUser(ctx context.Context, username string, keep int) (int, error) {
	c := s.c
	ctx, cancel := c.ctx(ctx)
	defer cancel()
	ended, err := limitUserScript.Exec(ctx, c.rd, []string{c.key("u", username)}, []string{c.key("s", ""), strconv.Itoa(keep)}).AsStrSlice()
	s.forget(ended...)
	return len(ended), c.result("limit a user's sessions", err)
}

// Ping reports whether Redis answers now.
func (s *Store) Ping(ctx context.Context) error { return s.c.Ping(ctx) }

// ms is t in Unix milliseconds, as Redis's PEXPIREAT takes it.
func ms(t time.Time) string { return strconv.FormatInt(t.UnixMilli(), 10) }

// UserSessions returns the live sessions of username, read through its
// index (session.UserLister): the account page and `backupweb session
// list`.
func (s *Store) UserSessions(ctx context.Context, username string) (map[string]session.Record, error) {
	c := s.c
	cctx, cancel := c.ctx(ctx)
	keys, err := c.rd.Do(cctx, c.rd.B().Zrange().Key(c.key("u", username)).Min("0").Max("-1").Build()).AsStrSlice()
	cancel()
	if err = c.result("list a user's sessions", err); err != nil {
		return nil, err
	}
	out := make(map[string]session.Record, len(keys))
	for _, k := range keys {
		rec, ok, err := s.Find(ctx, k)
		if err != nil {
			return nil, err
		}
		if ok {
			out[k] = rec
		}
	}
	return out, nil
}

// AllSessions returns every live session under the prefix, for `backupweb
// session list` without a user: a SCAN of the session keys, so it costs
// Redis nothing it could not spare, and is meant for an administrator,
// never for a request.
func (s *Store) AllSessions(ctx context.Context) (map[string]session.Record, error) {
	c := s.c
	prefix := c.key("s", "")
	out := map[string]session.Record{}
	var cursor uint64
	for {
		cctx, cancel := c.ctx(ctx)
		e, err := c.rd.Do(cctx, c.rd.B().Scan().Cursor(cursor).Match(prefix+"*").Count(1000).Build()).AsScanEntry()
		cancel()
		if err = c.result("list sessions", err); err != nil {
			return nil, err
		}
		for _, k := range e.Elements {
			key := strings.TrimPrefix(k, prefix)
			rec, ok, err := s.Find(ctx, key)
			if err != nil {
				return nil, err
			}
			if ok {
				out[key] = rec
			}
		}
		if cursor = e.Cursor; cursor == 0 {
			return out, nil
		}
	}
}
