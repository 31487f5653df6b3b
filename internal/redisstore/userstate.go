package redisstore

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/rueidis"

	"github.com/backupweb/backupweb/internal/factors"
	"github.com/backupweb/backupweb/internal/tokens"
	"github.com/backupweb/backupweb/internal/userstate"
)

// UserState is a userstate.Store in Redis: every instance that names the
// same server and prefix enforces the same second factors and tokens at
// the same moment.
//
// Layout, under the prefix, with USER escaped (see tagUser) so that each
// user's keys share a hash tag and so one Redis Cluster slot:
//
//	us:{USER}:f   hash: "r" the factors record (JSON of factors.Record:
//	              the TOTP secret sealed, recovery codes hashed,
//	              passkeys), "m" its MAC, "s" the status ("enrolled" or
//	              "none") and "sm" the status's MAC
//	us:{USER}:c   hash: per passkey (field: its credential id, base64url)
//	              "COUNT.LASTUSED.MAC": the sign count and last use, the
//	              authority for both (the record's copy is not read)
//	us:{USER}:t   set: the hashes of USER's machine tokens
//	us:h:HANDLE   the user whose WebAuthn user handle is HANDLE (hex),
//	              with a MAC; checked against that user's record
//	us:t:HASH     hash: "r" a machine token (JSON of tokens.Token, only
//	              the token's SHA-256), "m" its MAC, "l" its last use
//	              (Unix seconds, written at most once a minute, not MAC'd:
//	              it grants nothing); expires with the token
//
// Every MAC is made by userstate.RecordKeys over the key's full name and
// the value, so a record copied under another key or altered does not
// check and is refused (ErrBroken), never read as empty. A change to a
// user's factors is one script comparing the record's MAC with the one
// the change was made from (an edit that lost a race is made again on
// what won), and a passkey's sign count is compared and updated by one
// script. Factor records and tokens without an expiry do not expire.
type UserState struct {
	c       *Client
	keys    *userstate.RecordKeys
	factors *factors.Keys
	now     func() time.Time

	mu      sync.Mutex
	decoded map[string]decodedToken // token key -> last decoding
	used    map[string]time.Time    // token id -> last write of "l"
	addrs   map[string][]string     // token id -> client addresses seen
	ended   map[string]time.Time    // token key -> when deleted here
}

type decodedToken struct {
	raw string
	tok tokens.Token
}

var _ userstate.Store = (*UserState)(nil)

// UserState returns the user-state store in this Redis: records MAC'd by
// keys, TOTP secrets opened by fkeys (a record whose secret does not open
// is refused). now may be nil (time.Now).
func (c *Client) UserState(keys *userstate.RecordKeys, fkeys *factors.Keys, now func() time.Time) *UserState {
	if now == nil {
		now = time.Now
	}
	return &UserState{c: c, keys: keys, factors: fkeys, now: now,
		decoded: map[string]decodedToken{}, used: map[string]time.Time{}, addrs: map[string][]string{}, ended: map[string]time.Time{}}
}

// tagUser escapes user for a key's hash tag: '%', '{', '}', ':' and
// control characters as %XX, so that any user name makes one tag and
// distinct names distinct keys.
func tagUser(user string) string {
	var b strings.Builder
	for i := 0; i < len(user); i++ {
		c := user[i]
		if c == '%' || c == '{' || c == '}' || c == ':' || c < 0x20 || c == 0x7f {
			fmt.Fprintf(&b, "%%%02X", c)
			continue
		}
		b.WriteByte(c)
	}
	return "{" + b.String() + "}"
}

// untagUser reverses tagUser.
func untagUser(tag string) (string, bool) {
	s, ok := strings.CutPrefix(tag, "{")
	if !ok {
		return "", false
	}
	if s, ok = strings.CutSuffix(s, "}"); !ok {
		return "", false
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			b.WriteByte(s[i])
			continue
		}
		if i+3 > len(s) {
			return "", false
		}
		v, err := strconv.ParseUint(s[i+1:i+3], 16, 8)
		if err != nil {
			return "", false
		}
		b.WriteByte(byte(v))
		i += 2
	}
	return b.String(), true
}

func (u *UserState) factorsKey(user string) string  { return u.c.key("us", tagUser(user), "f") }
func (u *UserState) countersKey(user string) string { return u.c.key("us", tagUser(user), "c") }
func (u *UserState) userTokensKey(user string) string {
	return u.c.key("us", tagUser(user), "t")
}
func (u *UserState) handleKey(h []byte) string   { return u.c.key("us", "h", hex.EncodeToString(h)) }
func (u *UserState) tokenKey(hash string) string { return u.c.key("us", "t", hash) }

// broken is the error of user's record at key that cannot be used.
func broken(user, key string, err error) error {
	return &userstate.BrokenError{User: user, Where: "redis key " + key, Err: err}
}

var b64 = base64.RawURLEncoding

// readFactors reads user's record with its passkeys' counters, checked:
// the record (nil: none), the MAC it was read with ("" none).
func (u *UserState) readFactors(ctx context.Context, user string) (*factors.Record, string, error) {
	c := u.c
	fk, ck := u.factorsKey(user), u.countersKey(user)
	cctx, cancel := c.ctx(ctx)
	defer cancel()
	res := c.rd().DoMulti(cctx, c.rd().B().Hmget().Key(fk).Field("r", "m").Build(), c.rd().B().Hgetall().Key(ck).Build())
	vals, err := res[0].ToArray()
	if err = c.result("read factors", err); err != nil {
		return nil, "", err
	}
	counters, err := res[1].AsStrMap()
	if err = c.result("read factors", err); err != nil {
		return nil, "", err
	}
	if len(vals) != 2 || vals[0].IsNil() {
		if len(counters) > 0 {
			return nil, "", broken(user, ck, errors.New("passkey counters without a record"))
		}
		return nil, "", nil
	}
	raw, _ := vals[0].ToString()
	mac, _ := vals[1].ToString()
	if m, err := b64.DecodeString(mac); err != nil || !u.keys.Check(fk, m, raw) {
		return nil, "", broken(user, fk, errors.New("the record's MAC does not check (altered, or written under a secret key this instance does not hold)"))
	}
	var rec factors.Record
	if err := json.Unmarshal([]byte(raw), &rec); err != nil {
		return nil, "", broken(user, fk, errors.New("the record is not valid JSON"))
	}
	rec.User = user
	if rec.TOTP != nil {
		if u.factors == nil {
			return nil, "", broken(user, fk, errors.New("a TOTP secret, and second factors are off here"))
		}
		if _, err := u.factors.OpenTOTP(user, rec.TOTP.Sealed); err != nil {
			return nil, "", broken(user, fk, err)
		}
	}
	for i := range rec.Passkeys {
		p := &rec.Passkeys[i]
		field := b64.EncodeToString(p.ID)
		count, last, err := u.openCounter(ck, field, counters[field])
		if err != nil {
			return nil, "", broken(user, ck, fmt.Errorf("passkey %d: %w", i+1, err))
		}
		if p.Credential, err = userstate.WithSignCount(p.Credential, count); err != nil {
			return nil, "", broken(user, fk, fmt.Errorf("passkey %d: %w", i+1, err))
		}
		p.LastUsed = last
	}
	if len(counters) != len(rec.Passkeys) {
		return nil, "", broken(user, ck, errors.New("the passkey counters do not match the record's passkeys"))
	}
	return &rec, mac, nil
}

// counterValue is a passkey counter's stored text: "COUNT.LASTUSED.MAC",
// LASTUSED in Unix milliseconds (0: never).
func (u *UserState) counterValue(key, field string, count uint32, last time.Time) string {
	ms := int64(0)
	if !last.IsZero() {
		ms = last.UnixMilli()
	}
	body := strconv.FormatUint(uint64(count), 10) + "." + strconv.FormatInt(ms, 10)
	return body + "." + b64.EncodeToString(u.keys.Sum(key, field, body))
}

// openCounter checks and reads a counter's text.
func (u *UserState) openCounter(key, field, v string) (uint32, time.Time, error) {
	if v == "" {
		return 0, time.Time{}, errors.New("its sign count is missing")
	}
	i := strings.LastIndexByte(v, '.')
	if i < 0 {
		return 0, time.Time{}, errors.New("its sign count is not in the stored form")
	}
	body, mac := v[:i], v[i+1:]
	m, err := b64.DecodeString(mac)
	if err != nil || !u.keys.Check(key, m, field, body) {
		return 0, time.Time{}, errors.New("its sign count's MAC does not check")
	}
	cs, ls, _ := strings.Cut(body, ".")
	count, err1 := strconv.ParseUint(cs, 10, 32)
	ms, err2 := strconv.ParseInt(ls, 10, 64)
	if err1 != nil || err2 != nil {
		return 0, time.Time{}, errors.New("its sign count is not in the stored form")
	}
	var last time.Time
	if ms != 0 {
		last = time.UnixMilli(ms).UTC()
	}
	return uint32(count), last, nil
}

// Factors implements userstate.Store.
func (u *UserState) Factors(ctx context.Context, user string) (*factors.Record, error) {
	rec, _, err := u.readFactors(ctx, user)
	return rec, err
}

// Status implements userstate.Store: the status and its MAC only, from
// the client-side cache while Redis has not invalidated it, so a
// signed-in request costs no round trip and opens no record.
func (u *UserState) Status(ctx context.Context, user string) (factors.Status, error) {
	c := u.c
	fk := u.factorsKey(user)
	cctx, cancel := c.ctx(ctx)
	defer cancel()
	vals, err := c.rd().DoCache(cctx, c.rd().B().Hmget().Key(fk).Field("s", "sm").Cache(), cacheTTL).ToArray()
	if err = c.result("read factor status", err); err != nil {
		return factors.Broken, err
	}
	if len(vals) != 2 || vals[0].IsNil() {
		return factors.None, nil
	}
	s, _ := vals[0].ToString()
	mac, _ := vals[1].ToString()
	if m, err := b64.DecodeString(mac); err != nil || !u.keys.Check(fk, m, "status", s) {
		return factors.Broken, nil
	}
	switch s {
	case "enrolled":
		return factors.Enrolled, nil
	case "none":
		return factors.None, nil
	}
	return factors.Broken, nil
}

// editScript stores a user's factors record when its MAC is still the
// one the edit was made from (ARGV[1], "" for none): ARGV[2] the record
// ("" removes it and its counters), ARGV[3] its MAC, ARGV[4] and ARGV[5]
// the status and its MAC, then pairs of counter field and initial value:
// a counter already stored is kept (it is the authority), one whose
// passkey is gone is removed. 1: stored, 0: the record changed meanwhile.
var editScript = newScript(`
local cur = redis.call('HGET', KEYS[1], 'm') or ''
if cur ~= ARGV[1] then return 0 end
if ARGV[2] == '' then
  redis.call('DEL', KEYS[1], KEYS[2])
  return 1
end
redis.call('HSET', KEYS[1], 'r', ARGV[2], 'm', ARGV[3], 's', ARGV[4], 'sm', ARGV[5])
local keep = {}
for i = 6, #ARGV, 2 do
  keep[ARGV[i]] = true
  redis.call('HSETNX', KEYS[2], ARGV[i], ARGV[i+1])
end
for _, f in ipairs(redis.call('HKEYS', KEYS[2])) do
  if not keep[f] then redis.call('HDEL', KEYS[2], f) end
end
return 1
`)

// maxEditTries bounds how often an edit that lost a race is made again.
const maxEditTries = 50

// EditFactors implements userstate.Store: read, fn, and a script that
// stores the result only if the record is still the one read.
func (u *UserState) EditFactors(ctx context.Context, user string, fn func(*factors.Record) error) error {
	for range maxEditTries {
		rec, mac, err := u.readFactors(ctx, user)
		if err != nil {
			return err
		}
		var oldHandle []byte
		if rec == nil {
			rec = &factors.Record{User: user}
		} else {
			oldHandle = bytes.Clone(rec.Handle)
		}
		fnErr := fn(rec)
		if errors.Is(fnErr, userstate.ErrUnchanged) {
			return nil
		}
		if fnErr != nil {
			return fnErr
		}
		rec.User = user
		if len(rec.Handle) > 0 && !bytes.Equal(rec.Handle, oldHandle) {
			if err := u.claimHandle(ctx, user, rec.Handle); err != nil {
				return err
			}
		}
		stored, err := u.storeFactors(ctx, user, mac, rec)
		if err != nil || stored {
			return err
		}
	}
	return fmt.Errorf("redis: the factors of %s changed %d times while being edited; try again", user, maxEditTries)
}

// storeFactors runs editScript for rec over the record whose MAC was
// old. It reports whether it stored.
func (u *UserState) storeFactors(ctx context.Context, user, old string, rec *factors.Record) (bool, error) {
	c := u.c
	fk, ck := u.factorsKey(user), u.countersKey(user)
	args := []string{old, "", "", "", ""}
	if rec.TOTP != nil || len(rec.Recovery) > 0 || len(rec.Passkeys) > 0 || len(rec.Handle) > 0 {
		stored := rec.Clone()
		seen := map[string]bool{}
		for i := range stored.Passkeys {
			p := &stored.Passkeys[i]
			field := b64.EncodeToString(p.ID)
			if seen[field] {
				return false, fmt.Errorf("redis: user %s holds the passkey %s twice", user, field)
			}
			seen[field] = true
			count, err := userstate.SignCount(p.Credential)
			if err != nil {
				return false, err
			}
			args = append(args, field, u.counterValue(ck, field, count, p.LastUsed))
		}
		raw, err := json.Marshal(stored)
		if err != nil {
			return false, fmt.Errorf("redis: encoding the factors of %s: %w", user, err)
		}
		status := "none"
		if rec.HasFactor() {
			status = "enrolled"
		}
		args[1] = string(raw)
		args[2] = b64.EncodeToString(u.keys.Sum(fk, string(raw)))
		args[3] = status
		args[4] = b64.EncodeToString(u.keys.Sum(fk, "status", status))
	}
	cctx, cancel := c.ctx(ctx)
	defer cancel()
	res, err := c.write1(cctx, "store factors", editScript.cmd(c, []string{fk, ck}, args))
	if err != nil {
		return false, err
	}
	n, err := res.AsInt64()
	if err != nil {
		return false, &Error{Op: "store factors", Err: errBadReply}
	}
	return n == 1, nil
}

// claimHandle records user as the owner of the WebAuthn user handle h.
// Handles are 32 random bytes, so two users never draw the same one; an
// index entry left by a removed record names a user whose record no
// longer holds the handle, which Owner checks.
func (u *UserState) claimHandle(ctx context.Context, user string, h []byte) error {
	c := u.c
	k := u.handleKey(h)
	v := b64.EncodeToString([]byte(user)) + "." + b64.EncodeToString(u.keys.Sum(k, user))
	cctx, cancel := c.ctx(ctx)
	defer cancel()
	_, err := c.write1(cctx, "store passkey user handle", c.rd().B().Set().Key(k).Value(v).Build())
	return err
}

// ResetFactors implements userstate.Store.
func (u *UserState) ResetFactors(ctx context.Context, user string) (bool, error) {
	c := u.c
	cctx, cancel := c.ctx(ctx)
	defer cancel()
	res, err := c.write1(cctx, "reset factors", c.rd().B().Del().Key(u.factorsKey(user), u.countersKey(user)).Build())
	if err != nil {
		return false, err
	}
	n, err := res.AsInt64()
	if err != nil {
		return false, &Error{Op: "reset factors", Err: errBadReply}
	}
	return n > 0, nil
}

// Owner implements userstate.Store.
func (u *UserState) Owner(ctx context.Context, handle []byte) (string, bool, error) {
	if len(handle) == 0 {
		return "", false, nil
	}
	c := u.c
	k := u.handleKey(handle)
	cctx, cancel := c.ctx(ctx)
	v, err := c.rd().Do(cctx, c.rd().B().Get().Key(k).Build()).ToString()
	cancel()
	if rueidis.IsRedisNil(err) {
		c.observe(nil)
		return "", false, nil
	}
	if err = c.result("read passkey user handle", err); err != nil {
		return "", false, err
	}
	us, ms, _ := strings.Cut(v, ".")
	name, err1 := b64.DecodeString(us)
	mac, err2 := b64.DecodeString(ms)
	if err1 != nil || err2 != nil || !u.keys.Check(k, mac, string(name)) {
		return "", false, nil
	}
	rec, err := u.Factors(ctx, string(name))
	if err != nil {
		return "", false, err
	}
	if rec == nil || !bytes.Equal(rec.Handle, handle) {
		return "", false, nil
	}
	return string(name), true, nil
}

// useScript compares and updates one passkey's sign count: ARGV[1] the
// field, ARGV[2] the value it was read as, ARGV[3] the new count, ARGV[4]
// the new value. 1: stored; 0: no such passkey; 2: changed since read;
// 3: not in the stored form; 4: the count is not above the stored one.
var useScript = newScript(`
local cur = redis.call('HGET', KEYS[1], ARGV[1])
if not cur then return 0 end
if cur ~= ARGV[2] then return 2 end
local n = tonumber(string.match(cur, '^(%d+)%.'))
if not n then return 3 end
local new = tonumber(ARGV[3])
if new > n or (new == 0 and n == 0) then
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[4])
  return 1
end
return 4
`)

// UsePasskey implements userstate.Store: the counter is read and checked
// (its MAC), then one script compares the count with the stored one and
// updates it, only if the counter is still the one read. The credential's
// JSON in the record is not rewritten: the counter is the authority for
// the count and the last use.
func (u *UserState) UsePasskey(ctx context.Context, user string, id []byte, count uint32, _ json.RawMessage, at time.Time) error {
	c := u.c
	ck := u.countersKey(user)
	field := b64.EncodeToString(id)
	for range maxEditTries {
		cctx, cancel := c.ctx(ctx)
		cur, err := c.rd().Do(cctx, c.rd().B().Hget().Key(ck).Field(field).Build()).ToString()
		cancel()
		if rueidis.IsRedisNil(err) {
			c.observe(nil)
			return userstate.ErrNoSuchPasskey
		}
		if err = c.result("read passkey sign count", err); err != nil {
			return err
		}
		stored, _, err := u.openCounter(ck, field, cur)
		if err != nil {
			return broken(user, ck, err)
		}
		if !userstate.CountAllowed(stored, count) {
			return fmt.Errorf("%w (stored %d, presented %d)", userstate.ErrCountNotAbove, stored, count)
		}
		next := u.counterValue(ck, field, count, at)
		cctx, cancel = c.ctx(ctx)
		res, err := c.write1(cctx, "update passkey sign count", useScript.cmd(c, []string{ck}, []string{field, cur, strconv.FormatUint(uint64(count), 10), next}))
		cancel()
		if err != nil {
			return err
		}
		n, err := res.AsInt64()
		if err != nil {
			return &Error{Op: "update passkey sign count", Err: errBadReply}
		}
		switch n {
		case 1:
			return nil
		case 0:
			return userstate.ErrNoSuchPasskey
		case 2:
			continue
		case 4:
			return fmt.Errorf("%w (stored %d, presented %d)", userstate.ErrCountNotAbove, stored, count)
		default:
			return broken(user, ck, errors.New("the sign count is not in the stored form"))
		}
	}
	return fmt.Errorf("redis: the sign count of a passkey of %s changed %d times while being updated", user, maxEditTries)
}

// Users implements userstate.Store by scanning the factors keys.
func (u *UserState) Users(ctx context.Context) ([]string, error) {
	keys, err := u.c.scan(ctx, u.c.key("us", "{*}", "f"))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, k := range keys {
		tag := strings.TrimSuffix(strings.TrimPrefix(k, u.c.key("us", "")), ":f")
		if user, ok := untagUser(tag); ok {
			out = append(out, user)
		}
	}
	slices.Sort(out)
	return out, nil
}

// UserStore returns the user-state store (see UserState), as the
// flask-login type asks for it (login.SharedUserState).
func (c *Client) UserStore(keys *userstate.RecordKeys, fkeys *factors.Keys, now func() time.Time) userstate.Store {
	return c.UserState(keys, fkeys, now)
}
