package redisstore

import (
	"context"
	"time"
)

// evictionTimeout bounds the start-up question about the eviction policy.
const evictionTimeout = 5 * time.Second

// checkEviction logs one warning when Redis may evict keys before they
// expire (its maxmemory-policy is not noeviction): a full Redis would then
// forget spent single-use tokens, which could be used again, and sessions.
// With noeviction a full Redis refuses new keys instead, which callers
// answer 503. A server that does not tell (CONFIG disabled, no answer) is
// not warned about. It runs once per client, in the background of Open
// or of the connection made after it.
func (c *Client) checkEviction() {
	defer close(c.evictionChecked)
	ctx, cancel := context.WithTimeout(context.Background(), max(c.timeout, evictionTimeout))
	defer cancel()
	m, err := c.rd().Do(ctx, c.rd().B().ConfigGet().Parameter("maxmemory-policy").Build()).AsStrMap()
	if err != nil {
		return
	}
	if p := m["maxmemory-policy"]; p != "" && p != "noeviction" {
		c.log.Warn("redis: maxmemory-policy is not noeviction: a full Redis may evict spent single-use tokens (TOTP steps, second-factor sign-ins, OAuth states, passkey ceremonies) and sessions before they expire; set maxmemory-policy noeviction",
			"maxmemory_policy", p)
	}
}
