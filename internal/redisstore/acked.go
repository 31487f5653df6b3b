package redisstore

import (
	"context"
	"fmt"
	"slices"

	"github.com/redis/rueidis"
)

// script is a Lua script: run by its SHA (rueidis's Exec) where no
// replica has to confirm it, sent whole (EVAL) in the batch of a write
// that must be followed by WAIT on the same connection.
type script struct {
	src string
	lua *rueidis.Lua
}

func newScript(src string) script { return script{src: src, lua: rueidis.NewLuaScript(src)} }

// exec runs s with keys and args, no replica waited for.
func (s script) exec(ctx context.Context, c *Client, keys, args []string) rueidis.RedisResult {
	return s.lua.Exec(ctx, c.rd(), keys, args)
}

// cmd is s as one command, for a batch.
func (s script) cmd(c *Client, keys, args []string) rueidis.Completed {
	return c.rd().B().Eval().Script(s.src).Numkeys(int64(len(keys))).Key(keys...).Arg(args...).Build()
}

// write runs cmds, in order on one server, as a write that must survive a
// failover: with [redis] replicas_acked above 0, each server's part is
// followed by WAIT on the connection that carried it (a WAIT counts the
// replicas that hold that connection's writes), and the write is an error
// unless enough replicas confirm within replica_timeout. The error, like
// every other, makes the request 503 with Retry-After: a write that may
// be lost is never answered as done. The results are cmds's; a command's
// own error (or nil reply) is left to the caller, with the first of
// them returned as err when it is not a nil reply.
func (c *Client) write(ctx context.Context, op string, cmds ...rueidis.Completed) ([]rueidis.RedisResult, error) {
	if c.replicas == 0 {
		res := c.rd().DoMulti(ctx, cmds...)
		return res, c.firstError(op, res)
	}
	if c.rd().Mode() != rueidis.ClientModeCluster {
		res := c.rd().DoMulti(ctx, append(cmds, c.waitCmd())...)
		if err := c.firstError(op, res[:len(cmds)]); err != nil {
			return res[:len(cmds)], err
		}
		return res[:len(cmds)], c.acked(op, res[len(cmds)])
	}
	// In a cluster each command goes, with its WAIT, to the master of its
	// slot; one after another, so that the order holds there too.
	out := make([]rueidis.RedisResult, 0, len(cmds))
	for _, cmd := range cmds {
		res := c.rd().DoMulti(ctx, cmd, c.waitCmd())
		out = append(out, res[0])
		if err := c.firstError(op, res[:1]); err != nil {
			return out, err
		}
		if err := c.acked(op, res[1]); err != nil {
			return out, err
		}
	}
	return out, nil
}

// write1 is write of one command, with its result.
func (c *Client) write1(ctx context.Context, op string, cmd rueidis.Completed) (rueidis.RedisResult, error) {
	res, err := c.write(ctx, op, cmd)
	return res[0], err
}

// waitCmd is WAIT for the configured replicas and timeout.
func (c *Client) waitCmd() rueidis.Completed {
	return c.rd().B().Wait().Numreplicas(int64(c.replicas)).Timeout(c.replicaTimeout.Milliseconds()).Build()
}

// firstError is the first failure among res, recorded for the outage
// log; a nil reply is not one.
func (c *Client) firstError(op string, res []rueidis.RedisResult) error {
	for _, r := range res {
		if err := r.Error(); err != nil && !rueidis.IsRedisNil(err) {
			return c.result(op, err)
		}
	}
	c.observe(nil)
	return nil
}

// acked checks WAIT's answer: the number of replicas that confirmed.
func (c *Client) acked(op string, r rueidis.RedisResult) error {
	n, err := r.AsInt64()
	if err != nil {
		return c.result(op, err)
	}
	if n < int64(c.replicas) {
		err := &Error{Op: op, Err: fmt.Errorf("%d of the %d replicas [redis] replicas_acked asks for confirmed the write within replica_timeout (%s); it may not survive a failover", n, c.replicas, c.replicaTimeout)}
		c.log.Warn("redis: a write was not confirmed by enough replicas; the request gets 503", "op", op, "confirmed", n, "replicas_acked", c.replicas)
		return err
	}
	return nil
}

// scan returns every key matching pattern, on every node of a cluster
// (a SCAN walks one node's keys), each key once.
func (c *Client) scan(ctx context.Context, pattern string) ([]string, error) {
	rd := c.rd()
	nodes := []rueidis.Client{rd}
	if rd.Mode() == rueidis.ClientModeCluster {
		nodes = nodes[:0]
		for _, n := range rd.Nodes() {
			nodes = append(nodes, n)
		}
	}
	seen := map[string]bool{}
	var out []string
	for _, n := range nodes {
		var cursor uint64
		for {
			cctx, cancel := c.ctx(ctx)
			e, err := n.Do(cctx, n.B().Scan().Cursor(cursor).Match(pattern).Count(500).Build()).AsScanEntry()
			cancel()
			if err = c.result("list keys", err); err != nil {
				return nil, err
			}
			for _, k := range e.Elements {
				if !seen[k] {
					seen[k] = true
					out = append(out, k)
				}
			}
			if cursor = e.Cursor; cursor == 0 {
				break
			}
		}
	}
	slices.Sort(out)
	return out, nil
}
