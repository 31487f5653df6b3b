package redisstore

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/rueidis"

	"github.com/backupweb/backupweb/internal/tokens"
)

// tokenUsageEvery is how often, at most, a token's last use is written.
const tokenUsageEvery = time.Minute

// maxTokenAddrs bounds the client addresses remembered per token.
const maxTokenAddrs = 32

// Token implements userstate.Store: one read of the token's key, from
// the client-side cache while Redis has not invalidated it (a revocation
// deletes the key, which invalidates every instance's copy), its MAC
// checked, its decoding reused while the text is the same.
func (u *UserState) Token(ctx context.Context, token string) (*tokens.Token, tokens.Status, error) {
	if !tokens.Wellformed(token) {
		return nil, tokens.Unknown, nil
	}
	h := tokens.HashOf(token)
	k := u.tokenKey(hex.EncodeToString(h[:]))
	if u.endedHere(k) {
		return nil, tokens.Unknown, nil
	}
	c := u.c
	cctx, cancel := c.ctx(ctx)
	vals, err := c.rd().DoCache(cctx, c.rd().B().Hmget().Key(k).Field("r", "m").Cache(), cacheTTL).ToArray()
	cancel()
	if err = c.result("find token", err); err != nil {
		return nil, tokens.Broken, err
	}
	if len(vals) != 2 || vals[0].IsNil() {
		return nil, tokens.Unknown, nil
	}
	raw, _ := vals[0].ToString()
	mac, _ := vals[1].ToString()
	t, ok := u.openToken(k, raw, mac)
	if !ok {
		c.log.Error("auth: a machine token's record in Redis does not check; the token is refused", "key", k)
		return nil, tokens.Broken, nil
	}
	if t.Expired(u.now()) {
		return &t, tokens.Expired, nil
	}
	return &t, tokens.Valid, nil
}

// endedHere reports whether this instance deleted the token key k in
// the last endedMemory: it is refused without asking the cache, whose
// copy Redis invalidates a round trip later (see Store.ended).
func (u *UserState) endedHere(k string) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	at, ok := u.ended[k]
	return ok && time.Since(at) < endedMemory
}

// openToken checks and decodes a token's record at key k.
func (u *UserState) openToken(k, raw, mac string) (tokens.Token, bool) {
	u.mu.Lock()
	d, ok := u.decoded[k]
	u.mu.Unlock()
	if ok && d.raw == raw+"\x00"+mac {
		return d.tok, true
	}
	m, err := b64.DecodeString(mac)
	if err != nil || !u.keys.Check(k, m, raw) {
		return tokens.Token{}, false
	}
	var t tokens.Token
	if err := json.Unmarshal([]byte(raw), &t); err != nil || u.tokenKey(t.Hash) != k {
		return tokens.Token{}, false
	}
	u.mu.Lock()
	if len(u.decoded) >= maxDecoded {
		clear(u.decoded)
	}
	u.decoded[k] = decodedToken{raw: raw + "\x00" + mac, tok: t}
	u.mu.Unlock()
	return t, true
}

// readTokens reads the token records of hashes; those gone are skipped
// and returned apart.
func (u *UserState) readTokens(ctx context.Context, hashes []string) (list []tokens.Token, gone []string, err error) {
	if len(hashes) == 0 {
		return nil, nil, nil
	}
	c := u.c
	cmds := make(rueidis.Commands, len(hashes))
	for i, h := range hashes {
		cmds[i] = c.rd().B().Hmget().Key(u.tokenKey(h)).Field("r", "m", "l").Build()
	}
	cctx, cancel := c.ctx(ctx)
	defer cancel()
	for i, res := range c.rd().DoMulti(cctx, cmds...) {
		vals, err := res.ToArray()
		if err = c.result("list tokens", err); err != nil {
			return nil, nil, err
		}
		if len(vals) != 3 || vals[0].IsNil() {
			gone = append(gone, hashes[i])
			continue
		}
		raw, _ := vals[0].ToString()
		mac, _ := vals[1].ToString()
		t, ok := u.openToken(u.tokenKey(hashes[i]), raw, mac)
		if !ok {
			return nil, nil, fmt.Errorf("redis: the record of a machine token (%s) does not check", u.tokenKey(hashes[i]))
		}
		if s, err := vals[2].ToString(); err == nil {
			if sec, err := strconv.ParseInt(s, 10, 64); err == nil && time.Unix(sec, 0).After(t.LastUsed) {
				t.LastUsed = time.Unix(sec, 0).UTC()
			}
		}
		list = append(list, t)
	}
	return list, gone, nil
}

// TokensOf implements userstate.Store.
func (u *UserState) TokensOf(ctx context.Context, user string) ([]tokens.Token, error) {
	c := u.c
	ik := u.userTokensKey(user)
	cctx, cancel := c.ctx(ctx)
	hashes, err := c.rd().Do(cctx, c.rd().B().Smembers().Key(ik).Build()).AsStrSlice()
	cancel()
	if err = c.result("list tokens", err); err != nil {
		return nil, err
	}
	list, gone, err := u.readTokens(ctx, hashes)
	if err != nil {
		return nil, err
	}
	if len(gone) > 0 {
		cctx, cancel := c.ctx(ctx)
		c.result("list tokens", c.rd().Do(cctx, c.rd().B().Srem().Key(ik).Member(gone...).Build()).Error())
		cancel()
	}
	list = slices.DeleteFunc(list, func(t tokens.Token) bool { return t.User != user })
	sortTokens(list)
	return list, nil
}

// AllTokens implements userstate.Store by scanning the token keys.
func (u *UserState) AllTokens(ctx context.Context) ([]tokens.Token, error) {
	keys, err := u.c.scan(ctx, u.tokenKey("*"))
	if err != nil {
		return nil, err
	}
	hashes := make([]string, len(keys))
	for i, k := range keys {
		hashes[i] = strings.TrimPrefix(k, u.tokenKey(""))
	}
	list, _, err := u.readTokens(ctx, hashes)
	sortTokens(list)
	return list, err
}

func sortTokens(list []tokens.Token) {
	slices.SortFunc(list, func(a, b tokens.Token) int {
		if c := a.Created.Compare(b.Created); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
}

// addTokenScript stores a token's record unless its key exists: 1
// stored, 0 taken. ARGV: the record, its MAC, the expiry in Unix
// milliseconds (0: none).
var addTokenScript = newScript(`
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'r', ARGV[1], 'm', ARGV[2])
if ARGV[3] ~= '0' then redis.call('PEXPIREAT', KEYS[1], ARGV[3]) end
return 1
`)

// AddToken implements userstate.Store: the user's index first, then the
// token's record, so a token that exists is always listed.
func (u *UserState) AddToken(ctx context.Context, t tokens.Token) error {
	if _, err := hex.DecodeString(t.Hash); err != nil || t.ID == "" || t.User == "" {
		return errors.New("redis: a token without id, user or hash")
	}
	all, err := u.AllTokens(ctx)
	if err != nil {
		return err
	}
	for _, o := range all {
		if o.ID == t.ID {
			return fmt.Errorf("redis: the token %s is stored already", t.ID)
		}
	}
	raw, err := json.Marshal(t)
	if err != nil {
		return fmt.Errorf("redis: encoding token %s: %w", t.ID, err)
	}
	c := u.c
	k := u.tokenKey(t.Hash)
	exp := "0"
	if !t.Expires.IsZero() {
		exp = strconv.FormatInt(t.Expires.Add(time.Minute).UnixMilli(), 10)
	}
	cctx, cancel := c.ctx(ctx)
	defer cancel()
	res, err := c.write(cctx, "add token",
		c.rd().B().Sadd().Key(u.userTokensKey(t.User)).Member(t.Hash).Build(),
		addTokenScript.cmd(c, []string{k}, []string{string(raw), b64.EncodeToString(u.keys.Sum(k, string(raw))), exp}))
	if err != nil {
		return err
	}
	n, err := res[1].AsInt64()
	if err != nil {
		return &Error{Op: "add token", Err: errBadReply}
	}
	if n != 1 {
		return fmt.Errorf("redis: the token %s is stored already", t.ID)
	}
	return nil
}

// RevokeToken implements userstate.Store: the token's record is deleted
// (every instance's cached copy with it), then its index entry.
func (u *UserState) RevokeToken(ctx context.Context, user, id string) (tokens.Token, error) {
	var list []tokens.Token
	var err error
	if user != "" {
		list, err = u.TokensOf(ctx, user)
	} else {
		list, err = u.AllTokens(ctx)
	}
	if err != nil {
		return tokens.Token{}, err
	}
	i := slices.IndexFunc(list, func(t tokens.Token) bool { return t.ID == id })
	if i < 0 {
		return tokens.Token{}, tokens.ErrNoToken
	}
	t := list[i]
	n, err := u.deleteTokens(ctx, t.User, t.Hash)
	if err != nil {
		return tokens.Token{}, err
	}
	if n == 0 {
		return tokens.Token{}, tokens.ErrNoToken
	}
	return t, nil
}

// deleteTokens deletes the tokens of user with hashes and reports how
// many existed.
func (u *UserState) deleteTokens(ctx context.Context, user string, hashes ...string) (int, error) {
	c := u.c
	cmds := make(rueidis.Commands, 0, len(hashes))
	for _, h := range hashes {
		cmds = append(cmds, c.rd().B().Del().Key(u.tokenKey(h)).Build())
	}
	cctx, cancel := c.ctx(ctx)
	defer cancel()
	u.mu.Lock()
	if len(u.ended) >= maxDecoded {
		clear(u.ended)
	}
	for _, h := range hashes {
		u.ended[u.tokenKey(h)] = time.Now()
	}
	u.mu.Unlock()
	// A revocation: the records and the index entries must survive a
	// failover (Client.write).
	cmds = append(cmds, c.rd().B().Srem().Key(u.userTokensKey(user)).Member(hashes...).Build())
	res, err := c.write(cctx, "revoke token", cmds...)
	n := 0
	for _, r := range res[:min(len(res), len(hashes))] {
		d, _ := r.AsInt64()
		n += int(d)
	}
	return n, err
}

// RevokeTokensOf implements userstate.Store.
func (u *UserState) RevokeTokensOf(ctx context.Context, user string) (int, error) {
	c := u.c
	cctx, cancel := c.ctx(ctx)
	hashes, err := c.rd().Do(cctx, c.rd().B().Smembers().Key(u.userTokensKey(user)).Build()).AsStrSlice()
	cancel()
	if err = c.result("revoke tokens", err); err != nil || len(hashes) == 0 {
		return 0, err
	}
	return u.deleteTokens(ctx, user, hashes...)
}

// usedScript writes a token's last use only while its record exists,
// so that a use racing a revocation does not leave a key behind.
var usedScript = newScript(`
if redis.call('EXISTS', KEYS[1]) == 1 then redis.call('HSET', KEYS[1], 'l', ARGV[1]) end
return 1
`)

// TokenUsed implements userstate.Store: "l" is written when this
// process last wrote it a minute ago or more; a failure is not an error
// of the request (the time is informative).
func (u *UserState) TokenUsed(ctx context.Context, t *tokens.Token, addr string, at time.Time) bool {
	u.mu.Lock()
	write := at.Sub(u.used[t.ID]) >= tokenUsageEvery
	if write {
		if len(u.used) >= maxDecoded {
			clear(u.used)
		}
		u.used[t.ID] = at
	}
	seen := u.addrs[t.ID]
	fresh := !slices.Contains(seen, addr)
	if fresh {
		if len(seen) >= maxTokenAddrs {
			seen = seen[1:]
		}
		if len(u.addrs) >= maxDecoded {
			clear(u.addrs)
		}
		u.addrs[t.ID] = append(seen, addr)
	}
	u.mu.Unlock()
	if write {
		c := u.c
		cctx, cancel := c.ctx(ctx)
		err := usedScript.exec(cctx, c, []string{u.tokenKey(t.Hash)}, []string{strconv.FormatInt(at.Unix(), 10)}).Error()
		cancel()
		if err = c.result("note token use", err); err != nil {
			c.log.Warn("redis: writing a token's last use failed", "token", t.ID, "err", err)
		}
	}
	return fresh
}
