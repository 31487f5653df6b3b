package password

import (
	"container/list"
	"sync"
	"time"
)

// cacheKey is an HMAC-SHA256 tag of (stored hash, password) under the
// Verifier's private key; the cache never holds the password nor an
// unkeyed digest of it.
type cacheKey [32]byte

// cacheEntry is one remembered successful verification.
type cacheEntry struct {
	key     cacheKey
	expires time.Time
}

// verifiedCache is a bounded least-recently-used set of successful
// verifications, each valid for a fixed time after it was computed (use does
// not extend it). Every operation is O(1) under one mutex held for a map
// access and a list move; nothing slow ever runs under it.
type verifiedCache struct {
	mu    sync.Mutex
	max   int
	ttl   time.Duration
	items map[cacheKey]*list.Element
	order *list.List // front: most recently used
	// gen counts purges; an entry computed before a purge is not added
	// after it.
	gen uint64
}

func newVerifiedCache(size int, ttl time.Duration) *verifiedCache {
	return &verifiedCache{
		max:   size,
		ttl:   ttl,
		items: make(map[cacheKey]*list.Element, min(size, 1024)),
		order: list.New(),
	}
}

// get reports whether key holds an unexpired verification at now, dropping
// it if it has expired. It also returns the purge count, to be passed to
// add for a verification computed after this miss.
func (c *verifiedCache) get(key cacheKey, now time.Time) (hit bool, gen uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.items[key]
	if !ok {
		return false, c.gen
	}
	if !now.Before(el.Value.(*cacheEntry).expires) {
		c.order.Remove(el)
		delete(c.items, key)
		return false, c.gen
	}
	c.order.MoveToFront(el)
	return true, c.gen
}

// add remembers a verification made at now, unless the cache was purged
// since gen was read; it evicts the least recently used entry when full.
func (c *verifiedCache) add(key cacheKey, now time.Time, gen uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.gen {
		return
	}
	expires := now.Add(c.ttl)
	if el, ok := c.items[key]; ok {
		el.Value.(*cacheEntry).expires = expires
		c.order.MoveToFront(el)
		return
	}
	c.items[key] = c.order.PushFront(&cacheEntry{key: key, expires: expires})
	for c.order.Len() > c.max {
		oldest := c.order.Back()
		c.order.Remove(oldest)
		delete(c.items, oldest.Value.(*cacheEntry).key)
	}
}

// purge forgets every entry and makes in-flight verifications that started
// before it unable to add theirs.
func (c *verifiedCache) purge() {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.items)
	c.order.Init()
	c.gen++
}

// len returns the number of entries, expired or not.
func (c *verifiedCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}
