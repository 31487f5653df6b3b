package redisstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/backupweb/backupweb/internal/factors"
	"github.com/backupweb/backupweb/internal/secretkey"
	"github.com/backupweb/backupweb/internal/userstate"
)

// swapFieldScript sets a hash field to ARGV[3] only while it still holds
// ARGV[2]: a reseal never overwrites a value another instance wrote
// meanwhile (which is under the current key anyway).
var swapFieldScript = newScript(`
if redis.call('HGET', KEYS[1], ARGV[1]) == ARGV[2] then
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
  return 1
end
return 0
`)

// Reseal implements secretkey.Resealer for the user state kept in Redis:
// every user's factors record (its TOTP secret and recovery codes sealed
// again, the record's MAC made again), every passkey counter and every
// machine token's MAC, under the current key of keys. What opens under
// neither key is left as it is and counted. A second run finds
// everything current.
func (u *UserState) Reseal(ctx context.Context, keys secretkey.Keys) ([]secretkey.Count, error) {
	fk, err := factors.NewKeyring(keys)
	if err != nil {
		return nil, err
	}
	rk, err := userstate.NewRecordKeys(keys.Current, keys.Previous)
	if err != nil {
		return nil, err
	}
	r := u.c.UserState(rk, fk, u.now)
	users, err := r.Users(ctx)
	if err != nil {
		return nil, err
	}
	totp := secretkey.Count{Kind: "TOTP secrets (redis)"}
	recovery := secretkey.Count{Kind: "recovery codes (redis)"}
	records := secretkey.Count{Kind: "factors records (redis)"}
	for _, user := range users {
		rec, mac, err := r.readFactors(ctx, user)
		var be *userstate.BrokenError
		switch {
		case errors.As(err, &be):
			records.Refused++
			continue
		case err != nil:
			return nil, err
		case rec == nil:
			continue
		}
		raw, _ := b64.DecodeString(mac)
		macCurrent := rk.CheckCurrent(r.factorsKey(user), raw, rawFactors(ctx, r, user))
		c := fk.Reseal(rec)
		totp.Resealed, totp.Current, totp.Refused = totp.Resealed+c.TOTPResealed, totp.Current+c.TOTPCurrent, totp.Refused+c.TOTPRefused
		recovery.Resealed, recovery.Current, recovery.Refused, recovery.Stuck = recovery.Resealed+c.RecoveryResealed, recovery.Current+c.RecoveryCurrent, recovery.Refused+c.RecoveryRefused, recovery.Stuck+c.RecoveryKeyed
		if macCurrent && c.TOTPResealed == 0 && c.RecoveryResealed == 0 {
			records.Current++
		} else {
			stored, err := r.storeFactors(ctx, user, mac, rec)
			if err != nil {
				return nil, err
			}
			if !stored {
				return nil, fmt.Errorf("redis: the factors of %s changed while being resealed; run rotate-secret again", user)
			}
			records.Resealed++
		}
		counters, err := r.resealCounters(ctx, user)
		if err != nil {
			return nil, err
		}
		records.Resealed += counters.Resealed
		records.Refused += counters.Refused
	}
	tok, err := r.resealTokens(ctx)
	if err != nil {
		return nil, err
	}
	return []secretkey.Count{totp, recovery, records, tok}, nil
}

// rawFactors returns the stored text of user's factors record, "" when
// there is none.
func rawFactors(ctx context.Context, u *UserState, user string) string {
	c := u.c
	cctx, cancel := c.ctx(ctx)
	defer cancel()
	s, _ := c.rd().Do(cctx, c.rd().B().Hget().Key(u.factorsKey(user)).Field("r").Build()).ToString()
	return s
}

// resealCounters writes again, under the current key, each passkey
// counter of user that checks under a previous one.
func (u *UserState) resealCounters(ctx context.Context, user string) (secretkey.Count, error) {
	var n secretkey.Count
	c := u.c
	key := u.countersKey(user)
	cctx, cancel := c.ctx(ctx)
	all, err := c.rd().Do(cctx, c.rd().B().Hgetall().Key(key).Build()).AsStrMap()
	cancel()
	if err = c.result("read passkey counters", err); err != nil {
		return n, err
	}
	for field, v := range all {
		count, last, err := u.openCounter(key, field, v)
		if err != nil {
			n.Refused++
			continue
		}
		next := u.counterValue(key, field, count, last)
		if next == v {
			continue
		}
		cctx, cancel := c.ctx(ctx)
		err = swapFieldScript.exec(cctx, c, []string{key}, []string{field, v, next}).Error()
		cancel()
		if err = c.result("reseal a passkey counter", err); err != nil {
			return n, err
		}
		n.Resealed++
	}
	return n, nil
}

// resealTokens makes again, under the current key, the MAC of every
// machine token record that checks under a previous one.
func (u *UserState) resealTokens(ctx context.Context) (secretkey.Count, error) {
	n := secretkey.Count{Kind: "machine token records (redis)"}
	c := u.c
	keys, err := u.c.scan(ctx, u.tokenKey("*"))
	if err != nil {
		return n, err
	}
	for _, k := range keys {
		cctx, cancel := c.ctx(ctx)
		vals, err := c.rd().Do(cctx, c.rd().B().Hmget().Key(k).Field("r", "m").Build()).ToArray()
		cancel()
		if err = c.result("read a token", err); err != nil {
			return n, err
		}
		if len(vals) != 2 {
			continue
		}
		raw, err1 := vals[0].ToString()
		mac, err2 := vals[1].ToString()
		if err1 != nil || err2 != nil {
			continue // gone meanwhile
		}
		m, err := b64.DecodeString(mac)
		switch {
		case err != nil || !u.keys.Check(k, m, raw):
			n.Refused++
			continue
		case u.keys.CheckCurrent(k, m, raw):
			n.Current++
			continue
		}
		next := b64.EncodeToString(u.keys.Sum(k, raw))
		cctx, cancel = c.ctx(ctx)
		err = swapFieldScript.exec(cctx, c, []string{k}, []string{"m", mac, next}).Error()
		cancel()
		if err = c.result("reseal a token", err); err != nil {
			return n, err
		}
		n.Resealed++
	}
	return n, nil
}
