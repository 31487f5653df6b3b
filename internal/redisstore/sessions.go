package redisstore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
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
// manager does, once per version of the record, whatever Redis's TTL
// says. "u:USER" is
// a sorted set of USER's session keys by creation time, which expires
// with the last of them: what the listings and max_sessions_per_user
// count. Ending a user's sessions does not depend on the index: "g:USER"
// is the user's generation (session.Generations). The session manager
// refuses a session the index does not name (Indexed: taken out by
// hand), which could otherwise escape the count. Every script touches
// one key, so each runs in one slot of a Redis Cluster; the index is
// written before the session and cleared after it, so a session that
// exists is always listed, and an entry whose session has ended is
// dropped by LimitUser.
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
	// reads holds the built commands of the reads every request makes.
	reads readCmds
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
	_ session.Store          = (*Store)(nil)
	_ session.Toucher        = (*Store)(nil)
	_ session.UserDeleter    = (*Store)(nil)
	_ session.UserLimiter    = (*Store)(nil)
	_ session.Pinger         = (*Store)(nil)
	_ session.Generations    = (*Store)(nil)
	_ session.Indexer        = (*Store)(nil)
	_ session.StandingFinder = (*Store)(nil)
)

// Find reads the record under key, from the client-side cache while Redis
// has not invalidated it.
func (s *Store) Find(ctx context.Context, key string) (session.Record, bool, error) {
	rec, found, _, err := s.find(ctx, key, false)
	return rec, found, err
}

// FindStanding is Find, and with it (session.StandingFinder), when this
// instance has read the record before and so knows its user, the user's
// generation and whether the user's index names the session: the three
// reads in one look-up in the client-side cache, or one round trip.
// A failure of those two reads leaves Standing.User empty, for the
// manager to read them one by one.
func (s *Store) FindStanding(ctx context.Context, key string) (session.Record, bool, session.Standing, error) {
	return s.find(ctx, key, true)
}

// find is Find, and FindStanding with standing.
func (s *Store) find(ctx context.Context, key string, standing bool) (session.Record, bool, session.Standing, error) {
	var st session.Standing
	c := s.c
	rd := c.rd()
	s.mu.Lock()
	if s.endedLocked(key) {
		s.mu.Unlock()
		return session.Record{}, false, st, nil
	}
	cmd := s.findCmd(rd, key)
	d, known := s.decoded[key]
	var index, gen rueidis.Cacheable
	var floor uint64
	if standing = standing && known; standing {
		user := d.rec.Username
		index, gen, floor = s.indexCmd(rd, key, user), s.genCmd(rd, user), s.floor[user]
	}
	s.mu.Unlock()
	ctx, cancel := c.ctx(ctx)
	defer cancel()
	var res rueidis.RedisResult
	if standing {
		multi := rd.DoMultiCache(ctx, rueidis.CT(cmd, cacheTTL), rueidis.CT(index, cacheTTL), rueidis.CT(gen, cacheTTL))
		res = multi[0]
		indexed, err1 := s.indexedFrom(multi[1])
		g, err2 := s.generationFrom(multi[2], floor)
		if err1 == nil && err2 == nil {
			st = session.Standing{User: d.rec.Username, Gen: g, Indexed: indexed}
		}
	} else {
		res = rd.DoCache(ctx, cmd, cacheTTL)
	}
	rec, found, err := s.record(key, res, d, known)
	if !found || err != nil || rec.Username != st.User {
		st = session.Standing{}
	}
	return rec, found, st, err
}

// record is the session under key in res, the answer to its HMGET; d is
// the last decoding of key, when known.
func (s *Store) record(key string, res rueidis.RedisResult, d decodedRecord, known bool) (session.Record, bool, error) {
	vals, err := res.ToArray()
	if err = s.c.result("find session", err); err != nil {
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
	var rec session.Record
	if known && d.raw == raw {
		rec = cloneRecord(d.rec)
	} else if rec, err = s.decode(key, raw); err != nil {
		return session.Record{}, false, &Error{Op: "find session", Err: errors.New("stored record is not valid JSON")}
	}
	rec.LastSeen, rec.Expires, rec.MAC = time.UnixMilli(l), time.UnixMilli(e), []byte(mac)
	if !time.Now().Before(rec.Expires) {
		return session.Record{}, false, nil
	}
	return rec, true, nil
}

// Indexed reports whether username's index names the session under key
// (session.Indexer). A session is indexed before it is written, and
// taken out of the index only after it has ended, so a live session its
// index does not name was taken out of it by hand, or the index was
// lost: the manager refuses it, so that it can neither escape
// max_sessions_per_user (which counts the index) nor hide from the
// account page and `session list`. Read through the client-side cache,
// like the record.
func (s *Store) Indexed(ctx context.Context, key, username string) (bool, error) {
	c := s.c
	rd := c.rd()
	s.mu.Lock()
	cmd := s.indexCmd(rd, key, username)
	s.mu.Unlock()
	ctx, cancel := c.ctx(ctx)
	defer cancel()
	return s.indexedFrom(rd.DoCache(ctx, cmd, cacheTTL))
}

// indexedFrom is Indexed's answer from res, the answer to its ZSCORE.
func (s *Store) indexedFrom(res rueidis.RedisResult) (bool, error) {
	_, err := res.AsFloat64()
	if err = s.c.result("read a user's index", err); rueidis.IsRedisNil(err) {
		return false, nil
	}
	return err == nil, err
}

// decode decodes raw, the record under key, and remembers the decoding.
// It returns a copy the caller may modify.
func (s *Store) decode(key, raw string) (session.Record, error) {
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

// endedLocked reports whether this instance ended key a moment ago.
// s.mu must be held.
func (s *Store) endedLocked(key string) bool {
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
	s.forgetReads(keys...)
	for _, k := range keys {
		delete(s.decoded, k)
		if len(s.ended) < maxDecoded {
			s.ended[k] = now
		}
	}
}

// cloneRecord returns a copy of r that shares no slice with it (its
// attributes cannot be changed in place: they are shared).
func cloneRecord(r session.Record) session.Record {
	r.CSRF = bytes.Clone(r.CSRF)
	return r
}

// sessionScript writes a session's hash and its deadline.
// KEYS: session. ARGV: record, user, last seen, deadline, MAC.
var sessionScript = newScript(`
redis.call('HSET', KEYS[1], 'r', ARGV[1], 'u', ARGV[2], 'l', ARGV[3], 'e', ARGV[4], 'm', ARGV[5])
redis.call('PEXPIREAT', KEYS[1], ARGV[4])
return 1`)

// indexScript adds a session to its user's index, kept until the
// deadline at least. KEYS: index. ARGV: created, key, deadline.
var indexScript = newScript(`
redis.call('ZADD', KEYS[1], ARGV[1], ARGV[2])
if redis.call('PEXPIRETIME', KEYS[1]) < tonumber(ARGV[3]) then
  redis.call('PEXPIREAT', KEYS[1], ARGV[3])
end
return 1`)

// Commit writes rec under key, expiring at rec.Expires, and indexes it
// under its user: the index first, so that a session that exists is
// always listed (an entry whose session is gone is dropped by
// LimitUser). Each script touches one key, so each runs in one slot of a
// Redis Cluster. A sign-in is a write that must survive a failover
// (Client.write).
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
	_, err = c.write(ctx, "commit session",
		indexScript.cmd(c, []string{c.key("u", rec.Username)}, []string{ms(rec.Created), key, ms(rec.Expires)}),
		sessionScript.cmd(c, []string{c.key("s", key)}, []string{string(body), rec.Username, ms(rec.LastSeen), ms(rec.Expires), string(mac)}))
	return err
}

// touchScript refreshes an existing session's activity and deadline; it
// never creates a session. It returns the session's user, or nil.
// KEYS: session. ARGV: last seen, deadline, MAC.
var touchScript = newScript(`
local u = redis.call('HGET', KEYS[1], 'u')
if not u then return false end
redis.call('HSET', KEYS[1], 'l', ARGV[1], 'e', ARGV[2], 'm', ARGV[3])
redis.call('PEXPIREAT', KEYS[1], ARGV[2])
return u`)

// extendScript keeps an index until a deadline at least, if it exists.
// KEYS: index. ARGV: deadline.
var extendScript = newScript(`
if redis.call('EXISTS', KEYS[1]) == 1 and redis.call('PEXPIRETIME', KEYS[1]) < tonumber(ARGV[1]) then
  redis.call('PEXPIREAT', KEYS[1], ARGV[1])
end
return 1`)

// Touch sets the activity, deadline and MAC of the session under key, if
// it still exists, and keeps its user's index as long. The user of a
// session never changes: when this instance has read the session, both
// go in one round trip, else the index follows the answer. A refresh
// waits for no replica: losing one to a failover only brings the idle
// deadline nearer.
func (s *Store) Touch(ctx context.Context, key string, lastSeen, expires time.Time, mac []byte) error {
	c := s.c
	ctx, cancel := c.ctx(ctx)
	defer cancel()
	if user, ok := s.userOf(key); ok {
		res := c.rd().DoMulti(ctx,
			touchScript.cmd(c, []string{c.key("s", key)}, []string{ms(lastSeen), ms(expires), string(mac)}),
			extendScript.cmd(c, []string{c.key("u", user)}, []string{ms(expires)}))
		return c.firstError("touch session", res)
	}
	user, err := touchScript.exec(ctx, c, []string{c.key("s", key)}, []string{ms(lastSeen), ms(expires), string(mac)}).ToString()
	if rueidis.IsRedisNil(err) {
		c.observe(nil)
		return nil
	}
	if err = c.result("touch session", err); err != nil {
		return err
	}
	return c.result("touch session", extendScript.exec(ctx, c, []string{c.key("u", user)}, []string{ms(expires)}).Error())
}

// userOf returns the user of the session under key, when this instance
// has decoded it.
func (s *Store) userOf(key string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, ok := s.decoded[key]
	return d.rec.Username, ok
}

// deleteScript removes a session and returns its user, or nil.
// KEYS: session.
var deleteScript = newScript(`
local u = redis.call('HGET', KEYS[1], 'u')
redis.call('DEL', KEYS[1])
return u`)

// Delete removes the session under key, then its entry in its user's
// index; an unknown key is not an error. The removal is a revocation:
// a write that must survive a failover (Client.write).
func (s *Store) Delete(ctx context.Context, key string) error {
	s.forget(key)
	c := s.c
	ctx, cancel := c.ctx(ctx)
	defer cancel()
	res, err := c.write1(ctx, "delete session", deleteScript.cmd(c, []string{c.key("s", key)}, nil))
	if err != nil {
		return err
	}
	user, err := res.ToString()
	if rueidis.IsRedisNil(err) {
		return nil
	}
	if err != nil {
		return &Error{Op: "delete session", Err: errBadReply}
	}
	return c.result("delete session", c.rd().Do(ctx, c.rd().B().Zrem().Key(c.key("u", user)).Member(key).Build()).Error())
}

// takeIndexScript returns every session key a user's index names and
// removes the index. KEYS: index.
var takeIndexScript = newScript(`
local keys = redis.call('ZRANGE', KEYS[1], 0, -1)
redis.call('DEL', KEYS[1])
return keys`)

// DeleteUser moves username's generation forward ("g:USER", which never
// expires), so that every session made before is refused whether or not
// the index names it, then removes the sessions the index names, and
// the index, and returns how many sessions it removed. Both steps are
// writes that must survive a failover (Client.write).
func (s *Store) DeleteUser(ctx context.Context, username string) (int, error) {
	c := s.c
	ctx, cancel := c.ctx(ctx)
	defer cancel()
	res, err := c.write(ctx, "delete a user's sessions",
		c.rd().B().Incr().Key(c.key("g", username)).Build(),
		takeIndexScript.cmd(c, []string{c.key("u", username)}, nil))
	if err != nil {
		return 0, err
	}
	g, err1 := res[0].AsInt64()
	keys, err2 := res[1].AsStrSlice()
	if err1 != nil || err2 != nil || g < 1 {
		return 0, &Error{Op: "delete a user's sessions", Err: errBadReply}
	}
	s.raiseGeneration(username, uint64(g))
	ended, err := s.deleteKeys(ctx, "delete a user's sessions", keys)
	return len(ended), err
}

// deleteKeys removes the sessions under keys (a revocation, which must
// survive a failover) and returns those that existed.
func (s *Store) deleteKeys(ctx context.Context, op string, keys []string) ([]string, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	s.forget(keys...)
	c := s.c
	cmds := make(rueidis.Commands, len(keys))
	for i, k := range keys {
		cmds[i] = c.rd().B().Del().Key(c.key("s", k)).Build()
	}
	res, err := c.write(ctx, op, cmds...)
	var ended []string
	for i, r := range res {
		if n, _ := r.AsInt64(); n == 1 {
			ended = append(ended, keys[i])
		}
	}
	return ended, err
}

// UserGeneration returns username's generation (session.Generations):
// "g:USER", read through the client-side cache, which Redis invalidates
// when another instance or a command moves it; never less than what this
// instance moved it to itself, whenever that invalidation arrives. A
// value that is not a number is an error: refused, never taken for 0.
func (s *Store) UserGeneration(ctx context.Context, username string) (uint64, error) {
	c := s.c
	rd := c.rd()
	// The floor is read before the generation: a move this instance
	// made before the read began is in it either way.
	s.mu.Lock()
	cmd, floor := s.genCmd(rd, username), s.floor[username]
	s.mu.Unlock()
	cctx, cancel := c.ctx(ctx)
	defer cancel()
	return s.generationFrom(rd.DoCache(cctx, cmd, cacheTTL), floor)
}

// generationFrom is UserGeneration's answer from res, the answer to its
// GET, and floor, what this instance moved the user to.
func (s *Store) generationFrom(res rueidis.RedisResult, floor uint64) (uint64, error) {
	c := s.c
	v, err := res.ToString()
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
	return max(g, floor), nil
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

// LimitUser ends the oldest sessions of username beyond keep: the
// index's entries whose session has ended are dropped, then the oldest
// live sessions beyond keep are removed (a revocation, which must
// survive a failover) with their entries. The index is scored by
// Created in milliseconds, and ZRANGE orders members of one score
// bytewise: sessions created in the same millisecond end smaller key
// first, as session.UserLimiter says every store does.
func (s *Store) LimitUser(ctx context.Context, username string, keep int) (int, error) {
	c := s.c
	ctx, cancel := c.ctx(ctx)
	defer cancel()
	idx := c.key("u", username)
	keys, err := c.rd().Do(ctx, c.rd().B().Zrange().Key(idx).Min("0").Max("-1").Build()).AsStrSlice()
	if err = c.result("limit a user's sessions", err); err != nil || len(keys) == 0 {
		return 0, err
	}
	cmds := make(rueidis.Commands, len(keys))
	for i, k := range keys {
		cmds[i] = c.rd().B().Exists().Key(c.key("s", k)).Build()
	}
	var live, dead []string
	for i, r := range c.rd().DoMulti(ctx, cmds...) {
		n, err := r.AsInt64()
		if err = c.result("limit a user's sessions", err); err != nil {
			return 0, err
		}
		if n == 1 {
			live = append(live, keys[i])
		} else {
			dead = append(dead, keys[i])
		}
	}
	var ended []string
	if extra := len(live) - keep; extra > 0 {
		if ended, err = s.deleteKeys(ctx, "limit a user's sessions", live[:extra]); err != nil {
			return len(ended), err
		}
		dead = append(dead, live[:extra]...)
	}
	if len(dead) > 0 {
		err = c.result("limit a user's sessions", c.rd().Do(ctx, c.rd().B().Zrem().Key(idx).Member(dead...).Build()).Error())
	}
	return len(ended), err
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
	keys, err := c.rd().Do(cctx, c.rd().B().Zrange().Key(c.key("u", username)).Min("0").Max("-1").Build()).AsStrSlice()
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
// session list` without a user: a SCAN of the session keys (of every
// node of a cluster), so it costs Redis nothing it could not spare, and
// is meant for an administrator, never for a request.
func (s *Store) AllSessions(ctx context.Context) (map[string]session.Record, error) {
	c := s.c
	prefix := c.key("s", "")
	keys, err := c.scan(ctx, prefix+"*")
	if err != nil {
		return nil, err
	}
	out := map[string]session.Record{}
	for _, k := range keys {
		key := strings.TrimPrefix(k, prefix)
		rec, ok, err := s.Find(ctx, key)
		if err != nil {
			return nil, err
		}
		if ok {
			out[key] = rec
		}
	}
	return out, nil
}
