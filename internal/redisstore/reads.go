package redisstore

import (
	"github.com/redis/rueidis"
)

// readCmds keeps the commands of the reads every signed-in request makes
// (a session's record, its entry in its user's index, the user's
// generation), built once per key and pinned, so that rueidis does not
// recycle them: a read the client-side cache answers then builds nothing
// (no key to join, no slot to hash). Each is built by the client it is
// sent to; when the client changes (the Sentinel or cluster client taking
// the stand-in's place), they are built again. Each map is bounded by
// maxDecoded and emptied when full. Guarded by Store.mu.
type readCmds struct {
	client rueidis.Client
	find   map[string]rueidis.Cacheable // session key -> HMGET of its hash
	index  map[string]indexCmd          // session key -> ZSCORE in its user's index
	gen    map[string]rueidis.Cacheable // user -> GET of the generation
}

// indexCmd is the index read of a session key, for the user it was
// built for.
type indexCmd struct {
	user string
	cmd  rueidis.Cacheable
}

// readsFor returns s's read commands for rd, emptied if they were built
// by another client. s.mu must be held.
func (s *Store) readsFor(rd rueidis.Client) *readCmds {
	if s.reads.client != rd {
		s.reads = readCmds{client: rd}
	}
	return &s.reads
}

// pinned returns m[k], building it with build (and pinning it) when it
// is not there; m is made, or emptied when full, as needed.
func pinned[V any](m *map[string]V, k string, build func() V) V {
	if v, ok := (*m)[k]; ok {
		return v
	}
	if *m == nil || len(*m) >= maxDecoded {
		*m = make(map[string]V)
	}
	v := build()
	(*m)[k] = v
	return v
}

// findCmd returns the read of the session under key. s.mu must be held.
func (s *Store) findCmd(rd rueidis.Client, key string) rueidis.Cacheable {
	return pinned(&s.readsFor(rd).find, key, func() rueidis.Cacheable {
		return rd.B().Hmget().Key(s.c.key("s", key)).Field("r", "l", "e", "m").Cache().Pin()
	})
}

// indexCmd returns the read of key's entry in username's index. s.mu
// must be held.
func (s *Store) indexCmd(rd rueidis.Client, key, username string) rueidis.Cacheable {
	r := s.readsFor(rd)
	build := func() indexCmd {
		return indexCmd{user: username, cmd: rd.B().Zscore().Key(s.c.key("u", username)).Member(key).Cache().Pin()}
	}
	ic := pinned(&r.index, key, build)
	if ic.user != username {
		// Not the user the record names: read, and keep, that one's.
		ic = build()
		r.index[key] = ic
	}
	return ic.cmd
}

// genCmd returns the read of username's generation. s.mu must be held.
func (s *Store) genCmd(rd rueidis.Client, username string) rueidis.Cacheable {
	return pinned(&s.readsFor(rd).gen, username, func() rueidis.Cacheable {
		return rd.B().Get().Key(s.c.key("g", username)).Cache().Pin()
	})
}

// forgetReads drops the read commands of the session keys.
// s.mu must be held.
func (s *Store) forgetReads(keys ...string) {
	for _, k := range keys {
		delete(s.reads.find, k)
		delete(s.reads.index, k)
	}
}
