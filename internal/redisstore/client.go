// Package redisstore keeps in Redis the state several instances of the
// program must agree on: sessions (with a per-user index, so that a user's
// sessions end everywhere at once), the failure counts of throttling, and
// the single use of OAuth states. A Client implements auth.Shared, with
// the abilities sessionauth.SharedSessions and passwordauth.SharedCounters.
//
// It speaks to one Redis server, to the master Redis Sentinels name, or
// to a Redis Cluster, through rueidis (whose Sentinel and cluster clients
// find the master and follow a failover), with RESP3 and server-assisted
// client-side caching: a session check is answered from memory while Redis
// has not said the session changed, and Redis says so (an invalidation
// pushed on the connection) as it carries out the change, so a logout on
// one instance is refused by every other within a round trip. A
// connection that stops answering is found by a ping within a second plus
// the command timeout and then dropped, cache and all.
//
// Every failure is an error whose Unavailable method reports true: callers
// answer 503 and never admit nor sign out anyone because Redis could not be
// reached. One line is logged when Redis stops answering and one when it
// answers again. The writes that must survive a failover (a sign-in, a
// spent single-use token, a revocation, a factor or token change) are
// answered only once [redis] replicas_acked replicas hold them (WAIT, see
// Client.write); every script runs in one cluster slot.
package redisstore

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/rueidis"

	"github.com/backupweb/backupweb/internal/fspath"
	"github.com/backupweb/backupweb/internal/session"
	"github.com/backupweb/backupweb/internal/throttle"
)

// probeInterval is how often, during an outage, the client pings Redis to
// notice (and log) its return when no request does.
const probeInterval = 500 * time.Millisecond

// cacheTTL bounds how long a session read stays in the client-side cache
// even without an invalidation (Redis's own expiry of the key bounds it
// too). Invalidations, not this TTL, keep the cache fresh.
const cacheTTL = 30 * time.Second

// cacheBytes is the client-side cache of each connection.
const cacheBytes = 16 << 20

// Client is a connection to Redis shared by every part of the program that
// keeps state there. It is safe for concurrent use.
type Client struct {
	// conn is the rueidis client (see rd).
	conn    atomic.Pointer[rueidis.Client]
	prefix  string
	timeout time.Duration
	log     *slog.Logger
	// replicas and replicaTimeout are [redis] replicas_acked and
	// replica_timeout (see Client.write).
	replicas       int
	replicaTimeout time.Duration
	store          *Store

	deadline atomic.Pointer[sharedDeadline]
	down     atomic.Bool
	mu       sync.Mutex // guards downSince and probing
	since    time.Time
	probing  bool
	closed   chan struct{}
	closeOne sync.Once
	// evictionChecked is closed once the start-up question about the
	// eviction policy (checkEviction) has been asked and answered, or has
	// failed.
	evictionChecked chan struct{}
}

// Error is a failure to use Redis. Its Unavailable method reports true:
// the answer could not be had for now.
type Error struct {
	Op  string // what was being done: "find session", "count failure"...
	Err error
}

func (e *Error) Error() string { return "redis: " + e.Op + ": " + e.Err.Error() }

func (e *Error) Unwrap() error { return e.Err }

// Unavailable reports that Redis could not answer (see refusal.Unavailable).
func (e *Error) Unavailable() bool { return true }

// StoreDown reports that the store of sessions and failure counts is what
// does not answer (see refusal.StoreDown), so people are told so rather than
// that the server is busy.
func (e *Error) StoreDown() bool { return true }

// Options say which Redis to use and how: plain values, filled by the
// program from its [redis] section.
type Options struct {
	// URL is redis://[user@]host:port/db, rediss:// for TLS, or
	// unix:///path/to/redis.sock. It holds no password.
	URL string
	// Password is the server's password or the ACL user's. Never logged.
	Password string
	// Prefix starts every key written.
	Prefix string
	// TLSCA is the PEM file of the CA that signed the server's
	// certificate; empty: the system's roots.
	TLSCA string
	// ConnectTimeout bounds connecting.
	ConnectTimeout time.Duration
	// CommandTimeout bounds one command.
	CommandTimeout time.Duration
	// SentinelAddresses are the host:port of Redis Sentinels: with
	// them, SentinelMaster names the master they monitor, and URL's host
	// is not used (its user, database and TLS still are).
	SentinelAddresses []string
	// SentinelMaster is the master name the Sentinels monitor.
	SentinelMaster string
	// SentinelPassword is the Sentinels' own password. Never logged.
	SentinelPassword string
	// ClusterAddresses are host:port seed nodes of a Redis Cluster
	// (database 0 only); URL's host is not used.
	ClusterAddresses []string
	// ReplicasAcked is how many replicas must hold a write that has to
	// survive a failover (a sign-in, a spent single-use token, a
	// revocation, a factor or token change) before it is answered
	// (WAIT); 0 does not wait.
	ReplicasAcked int
	// ReplicaTimeout bounds that wait; replicas that do not confirm in
	// it make the write an error (503), never a success.
	ReplicaTimeout time.Duration
}

// Open returns a client for the Redis cfg names. It does not wait for
// Redis: when it cannot be reached yet, Open logs that once and returns a
// client whose commands fail (503) until it can. An error means cfg
// itself cannot be used (a CA file that holds no certificate).
func Open(cfg Options, log *slog.Logger) (*Client, error) {
	if log == nil {
		log = slog.Default()
	}
	opt, err := clientOption(cfg)
	if err != nil {
		return nil, err
	}
	c := &Client{prefix: cfg.Prefix, timeout: cfg.CommandTimeout, log: log, closed: make(chan struct{}),
		replicas: cfg.ReplicasAcked, replicaTimeout: cfg.ReplicaTimeout, evictionChecked: make(chan struct{})}
	if c.replicas > 0 && c.replicaTimeout <= 0 {
		c.replicaTimeout = defaultReplicaTimeout // WAIT 0 would wait forever
	}
	c.store = &Store{c: c}
	rd, err := rueidis.NewClient(opt)
	if rd == nil && opt.Sentinel.MasterSet == "" && len(cfg.ClusterAddresses) == 0 {
		return nil, fmt.Errorf("redis: %w", err)
	}
	if rd == nil {
		// rueidis's Sentinel and cluster clients are made only once a
		// Sentinel or a node answers: until then a client that fails
		// every command (503) stands in, and one is made in the
		// background, as one server's client reconnects by itself.
		first := err
		rd, err = rueidis.NewClient(rueidis.ClientOption{
			InitAddress: opt.InitAddress[:1], ForceSingleClient: true, DisableRetry: true, DisableCache: true,
			DialCtxFn: func(context.Context, string, *net.Dialer, *tls.Config) (net.Conn, error) {
				return nil, fmt.Errorf("no Redis Sentinel or cluster node answered yet: %w", first)
			},
		})
		if rd == nil {
			return nil, fmt.Errorf("redis: %w", err)
		}
		go c.connect(opt)
	}
	c.conn.Store(&rd)
	if err != nil {
		c.observe(err)
	} else {
		go c.checkEviction()
	}
	return c, nil
}

// rd is the rueidis client in use.
func (c *Client) rd() rueidis.Client { return *c.conn.Load() }

// connect makes the Sentinel or cluster client of opt once a Sentinel or
// a node answers, and puts it in place of the one that stood in.
func (c *Client) connect(opt rueidis.ClientOption) {
	t := time.NewTicker(probeInterval)
	defer t.Stop()
	for {
		select {
		case <-c.closed:
			return
		case <-t.C:
		}
		rd, err := rueidis.NewClient(opt)
		if rd == nil {
			c.log.Debug("redis: no Sentinel or cluster node answers yet", "err", err)
			continue
		}
		c.mu.Lock()
		select {
		case <-c.closed:
			c.mu.Unlock()
			rd.Close()
			return
		default:
		}
		old := c.conn.Swap(&rd)
		c.mu.Unlock()
		(*old).Close()
		c.observe(nil)
		go c.checkEviction()
		return
	}
}

// clientOption turns cfg into rueidis's options: no retries (the command
// timeout bounds every call), pings every second so that a dead
// connection, and its cache, are dropped quickly. One server (url), the
// master the Sentinels of cfg name, or a Redis Cluster from its seed
// nodes: finding the master, and following a failover, is rueidis's
// own (its Sentinel client, its cluster client).
func clientOption(cfg Options) (rueidis.ClientOption, error) {
	u, err := url.Parse(cfg.URL)
	if err != nil {
		return rueidis.ClientOption{}, errors.New("redis: [redis] url is not a URL")
	}
	opt := rueidis.ClientOption{
		ClientName:   "backupweb",
		Password:     cfg.Password,
		DisableRetry: true,
		// One connection, auto-pipelined: it carries the invalidations
		// of the cache, and its reader notices at once when the server
		// goes away, so no idle connection is found dead by a request.
		PipelineMultiplex: -1,
		CacheSizeEachConn: cacheBytes,
		ConnWriteTimeout:  cfg.CommandTimeout,
		Dialer:            net.Dialer{Timeout: cfg.ConnectTimeout, KeepAlive: time.Second},
	}
	if u.User != nil {
		opt.Username = u.User.Username()
	}
	if u.Scheme == "unix" {
		opt.ForceSingleClient = true
		opt.InitAddress = []string{u.Path}
		opt.DialCtxFn = func(ctx context.Context, addr string, d *net.Dialer, _ *tls.Config) (net.Conn, error) {
			return d.DialContext(ctx, "unix", addr)
		}
		return opt, nil
	}
	host, port, err := net.SplitHostPort(u.Host)
	if err != nil {
		host, port = u.Host, "6379"
	}
	if db := strings.TrimPrefix(u.Path, "/"); db != "" {
		if opt.SelectDB, err = strconv.Atoi(db); err != nil {
			return opt, errors.New("redis: [redis] url: the path must be a database number")
		}
	}
	if u.Scheme == "rediss" {
		opt.TLSConfig = &tls.Config{MinVersion: tls.VersionTLS12, ServerName: host}
		if cfg.TLSCA != "" {
			pem, err := os.ReadFile(cfg.TLSCA)
			if err != nil {
				return opt, fmt.Errorf("redis: [redis] tls_ca: %w", err)
			}
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(pem) {
				return opt, fmt.Errorf("redis: [redis] tls_ca: %s holds no PEM certificate", fspath.Show(cfg.TLSCA))
			}
			opt.TLSConfig.RootCAs = pool
		}
	}
	switch {
	case len(cfg.SentinelAddresses) > 0:
		opt.InitAddress = cfg.SentinelAddresses
		opt.Sentinel = rueidis.SentinelOption{
			MasterSet:  cfg.SentinelMaster,
			Password:   cfg.SentinelPassword,
			ClientName: "backupweb",
			Dialer:     opt.Dialer,
			TLSConfig:  opt.TLSConfig,
			// Reconciled with the Sentinels now and then, besides
			// following their +switch-master: a missed event does not
			// bind the client to a demoted master.
			TopologyRefreshInterval: sentinelRefresh,
		}
		if opt.TLSConfig != nil {
			// The servers' names are whatever the Sentinels report.
			opt.TLSConfig.ServerName = ""
		}
	case len(cfg.ClusterAddresses) > 0:
		if opt.SelectDB != 0 {
			return opt, errors.New("redis: [redis] url: a Redis Cluster has database 0 only")
		}
		opt.InitAddress = cfg.ClusterAddresses
		opt.ShuffleInit = true
		if opt.TLSConfig != nil {
			opt.TLSConfig.ServerName = ""
		}
	default:
		opt.ForceSingleClient = true
		opt.InitAddress = []string{net.JoinHostPort(host, port)}
	}
	return opt, nil
}

// defaultReplicaTimeout is Options.ReplicaTimeout when it is not set.
const defaultReplicaTimeout = 100 * time.Millisecond

// sentinelRefresh is how often the Sentinel client reconciles its
// master with the Sentinels.
const sentinelRefresh = 2 * time.Second

// SessionStore returns the session store (see Store).
func (c *Client) SessionStore() session.Store { return c.store }

// Counter returns the failure counter name, counted in Redis with the
// rules of throttle.Limiter configured by o (see Counter).
func (c *Client) Counter(name string, o throttle.Options) throttle.Counter {
	return newCounter(c, name, o)
}

// Ping reports whether Redis answers now.
func (c *Client) Ping(ctx context.Context) error {
	ctx, cancel := c.ctx(ctx)
	defer cancel()
	return c.result("ping", c.rd().Do(ctx, c.rd().B().Ping().Build()).Error())
}

// Close closes the connection. Commands after Close fail.
func (c *Client) Close() error {
	c.closeOne.Do(func() {
		c.mu.Lock()
		close(c.closed)
		c.mu.Unlock()
		c.rd().Close()
		if d := c.deadline.Load(); d != nil {
			d.cancel()
		}
	})
	return nil
}

// ctx bounds one command by the command timeout, not by the request's
// cancellation (a command is short, and bounded anyway). Commands share a
// deadline context made afresh every deadlineStep, so that a session read
// answered from the cache costs no timer, no context and no clock read of
// its own; each command then has between the command timeout less
// deadlineStep (and the lateness of the timer that ends the step) and the
// command timeout to complete.
func (c *Client) ctx(context.Context) (context.Context, context.CancelFunc) {
	if d := c.deadline.Load(); d != nil && !d.stale.Load() {
		return d.ctx, noCancel
	}
	// The context replaced is not cancelled: commands still running
	// under it keep their deadline, and its timer releases it.
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	d := &sharedDeadline{ctx: ctx, cancel: cancel}
	time.AfterFunc(deadlineStep, func() { d.stale.Store(true) })
	c.deadline.Store(d)
	return ctx, noCancel
}

// deadlineStep is how long a shared deadline context is handed out.
const deadlineStep = 10 * time.Millisecond

// sharedDeadline is a deadline context shared by the commands of one
// step; Close cancels the last one. stale is set when the step ends.
type sharedDeadline struct {
	ctx    context.Context
	cancel context.CancelFunc
	stale  atomic.Bool
}

func noCancel() {}

// key returns the Redis key of parts, under the prefix. Two parts, the
// keys read at every request, cost one allocation.
func (c *Client) key(parts ...string) string {
	if len(parts) == 2 {
		return c.prefix + parts[0] + ":" + parts[1]
	}
	return c.prefix + strings.Join(parts, ":")
}

// result records the outcome of a command for the outage log and wraps
// a failure in *Error.
func (c *Client) result(op string, err error) error {
	if err != nil && !rueidis.IsRedisNil(err) {
		c.observe(err)
		return &Error{Op: op, Err: err}
	}
	c.observe(nil)
	return err
}

// observe logs the start of an outage (the first failure after a
// success) and its end (the first success after it), once each, and
// probes Redis during an outage so that its end is noticed without
// traffic.
func (c *Client) observe(err error) {
	if err == nil {
		if c.down.Load() && c.down.CompareAndSwap(true, false) {
			c.mu.Lock()
			since := c.since
			c.mu.Unlock()
			c.log.Info("redis: answering again; shared sessions and counters are back", "outage", time.Since(since).Round(time.Millisecond))
		}
		return
	}
	if c.down.Load() || !c.down.CompareAndSwap(false, true) {
		return
	}
	select {
	case <-c.closed:
		return
	default:
	}
	c.mu.Lock()
	c.since = time.Now()
	start := !c.probing
	c.probing = true
	c.mu.Unlock()
	c.log.Error("redis: not answering; requests that need sessions or failure counts get 503 until it does", "err", err)
	if start {
		go c.probe()
	}
}

// probe pings Redis until it answers or the client is closed.
func (c *Client) probe() {
	t := time.NewTicker(probeInterval)
	defer t.Stop()
	for {
		select {
		case <-c.closed:
			return
		case <-t.C:
			c.Ping(context.Background())
		}
		c.mu.Lock()
		if !c.down.Load() {
			c.probing = false
			c.mu.Unlock()
			return
		}
		c.mu.Unlock()
	}
}

// Ready reports, for /readyz, whether Redis answers (see auth.Checker).
func (c *Client) Ready(ctx context.Context) error {
	if err := c.Ping(ctx); err != nil {
		return fmt.Errorf("the shared store does not answer: %w", err)
	}
	return nil
}
