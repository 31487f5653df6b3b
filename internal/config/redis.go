package config

import (
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/backupweb/backupweb/internal/fspath"
	"github.com/backupweb/backupweb/internal/ini"
	"github.com/backupweb/backupweb/internal/redisstore"
)

// Values of [server] store.
const (
	StoreFile  = "file"
	StoreRedis = "redis"
)

// Redis is the [redis] section, read into the store's options: url
// (redis://[user@]host:port/db, rediss:// for TLS, or
// unix:///path/to/redis.sock; it never holds a password, Load refuses
// one), password (never logged), prefix, tls_ca (empty: the system's
// roots), connect_timeout and command_timeout. It is read only when
// [server] store = redis.
type Redis = redisstore.Options

// Defaults of [redis].
const (
	DefaultRedisURL       = "redis://127.0.0.1:6379/0"
	DefaultRedisPrefix    = "backupweb:"
	DefaultConnectTimeout = 2 * time.Second
	DefaultCommandTimeout = time.Second
)

// DefaultReplicaTimeout is how long a write that must survive a failover
// waits for its replicas ([redis] replica_timeout).
const DefaultReplicaTimeout = 100 * time.Millisecond

var redisKeys = []string{"url", "password", "prefix", "tls_ca", "connect_timeout", "command_timeout",
	"sentinel_addresses", "sentinel_master", "sentinel_password", "cluster_addresses", "replicas_acked", "replica_timeout"}

// loadStore reads [server] store and, when it is redis, the [redis]
// section. Nothing connects: the keys are only checked.
func loadStore(srv, s *ini.Section) (string, Redis) {
	store := strings.ToLower(strings.TrimSpace(srv.String("store", StoreFile)))
	if store != StoreFile && store != StoreRedis {
		srv.Errorf("store", "must be %q (one instance, state in state_dir) or %q (several instances sharing a Redis server)", StoreFile, StoreRedis)
		store = StoreFile
	}
	warnUnknown(s, redisKeys)
	if store != StoreRedis {
		if s.Present() {
			s.Warnf("", "is ignored: [server] store is %q; set store = redis to use it", store)
		}
		return store, Redis{}
	}
	r := Redis{
		URL:            strings.TrimSpace(s.String("url", DefaultRedisURL)),
		Password:       s.String("password", ""),
		Prefix:         s.String("prefix", DefaultRedisPrefix),
		TLSCA:          strings.TrimSpace(s.String("tls_ca", "")),
		ConnectTimeout: s.Duration("connect_timeout", DefaultConnectTimeout),
		CommandTimeout: s.Duration("command_timeout", DefaultCommandTimeout),

		SentinelAddresses: s.List("sentinel_addresses"),
		SentinelMaster:    strings.TrimSpace(s.String("sentinel_master", "")),
		SentinelPassword:  s.String("sentinel_password", ""),
		ClusterAddresses:  s.List("cluster_addresses"),
		ReplicaTimeout:    s.Duration("replica_timeout", DefaultReplicaTimeout),
	}
	if err := checkRedisURL(r.URL); err != nil {
		s.Errorf("url", "%s", err)
	}
	checkRedisTopology(s, &r)
	if r.Prefix == "" {
		s.Errorf("prefix", "must not be empty: every key backupweb writes starts with it (the default is %s)", DefaultRedisPrefix)
	} else if strings.ContainsFunc(r.Prefix, func(c rune) bool { return c <= ' ' || c == 0x7f }) {
		s.Errorf("prefix", "must not hold spaces or control characters")
	}
	if r.TLSCA != "" {
		if !strings.HasPrefix(r.URL, "rediss://") {
			s.Warnf("tls_ca", "is used only with a rediss:// url")
		}
		if info, err := os.Stat(r.TLSCA); err != nil {
			s.Errorf("tls_ca", "cannot read %s: %v", fspath.Show(r.TLSCA), fspath.Cause(err))
		} else if info.IsDir() {
			s.Errorf("tls_ca", "%s is a directory; name the CA's PEM file", fspath.Show(r.TLSCA))
		}
	}
	return store, r
}

// checkRedisTopology checks the Sentinel and Cluster keys without
// connecting, and sets replicas_acked (1 by default with Sentinel or
// Cluster, else 0).
func checkRedisTopology(s *ini.Section, r *Redis) {
	ha := 0
	for _, k := range []struct {
		key   string
		addrs []string
	}{{"sentinel_addresses", r.SentinelAddresses}, {"cluster_addresses", r.ClusterAddresses}} {
		for _, a := range k.addrs {
			if err := checkHostPort(a); err != nil {
				s.Errorf(k.key, "%q: %s", a, err)
			}
		}
	}
	if len(r.SentinelAddresses) > 0 {
		ha = 1
		if r.SentinelMaster == "" {
			s.Errorf("sentinel_addresses", "needs sentinel_master: the master name the Sentinels monitor")
		}
	} else {
		for _, k := range []string{"sentinel_master", "sentinel_password"} {
			if s.Has(k) {
				s.Warnf(k, "is ignored without sentinel_addresses")
			}
		}
	}
	if len(r.ClusterAddresses) > 0 {
		ha = 1
		if len(r.SentinelAddresses) > 0 {
			s.Errorf("cluster_addresses", "cannot go with sentinel_addresses: a Redis Cluster fails over by itself; name one or the other")
		}
		if u, err := url.Parse(r.URL); err == nil {
			if u.Scheme == "unix" {
				s.Errorf("url", "must be redis:// or rediss:// with cluster_addresses (it gives the user, the database and TLS)")
			} else if db := strings.TrimPrefix(u.Path, "/"); db != "" && db != "0" {
				s.Errorf("url", "a Redis Cluster has database 0 only; write /0 or no path")
			}
		}
		if strings.ContainsAny(r.Prefix, "{}") {
			s.Errorf("prefix", "must not hold { or } with cluster_addresses: backupweb's keys put their own hash tag in braces, so that each script's keys share one cluster slot")
		}
	}
	if ha == 1 {
		if u, err := url.Parse(r.URL); err == nil && u.Scheme == "unix" && len(r.SentinelAddresses) > 0 {
			s.Errorf("url", "must be redis:// or rediss:// with sentinel_addresses (it gives the user, the database and TLS)")
		}
	}
	r.ReplicasAcked = s.Int("replicas_acked", ha, 0, 16)
	if r.ReplicasAcked > 0 && r.ReplicaTimeout >= r.CommandTimeout {
		s.Errorf("replica_timeout", "must be shorter than command_timeout (%s): a write that waits for its replicas is one command", r.CommandTimeout)
	}
}

// checkHostPort checks one host:port of a Sentinel or a cluster node.
func checkHostPort(a string) error {
	host, port, err := net.SplitHostPort(a)
	if err != nil || host == "" {
		return redisError("is not host:port")
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return redisError("has a port that is not a number from 1 to 65535")
	}
	return nil
}

// redisError is a problem with [redis] url, said without its value (the
// value may hold a password).
type redisError string

func (e redisError) Error() string { return string(e) }

// checkRedisURL checks [redis] url without connecting.
func checkRedisURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return redisError("is not a URL; write redis://host:6379/0, rediss://host:6380/0 or unix:///run/redis/redis.sock")
	}
	if u.User != nil {
		if _, has := u.User.Password(); has {
			return redisError("must not hold a password: write redis://user@host:6379/0 and put the password in [redis] password, as ${NAME}")
		}
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return redisError("must not have a query or fragment; the timeouts are [redis] connect_timeout and command_timeout")
	}
	switch u.Scheme {
	case "unix":
		if u.Host != "" || !strings.HasPrefix(u.Path, "/") {
			return redisError("a unix socket is written unix:///path/to/redis.sock (three slashes, an absolute path)")
		}
		return nil
	case "redis", "rediss":
	default:
		return redisError("must start with redis://, rediss:// (TLS) or unix://")
	}
	host, port, err := net.SplitHostPort(u.Host)
	if err != nil {
		host, port = u.Host, "6379"
	}
	if host == "" {
		return redisError("names no host; write redis://host:6379/0")
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return redisError("has a port that is not a number from 1 to 65535")
	}
	if db := strings.TrimPrefix(u.Path, "/"); db != "" {
		if n, err := strconv.Atoi(db); err != nil || n < 0 || strings.Contains(db, "/") {
			return redisError("the path must be a database number, such as /0")
		}
	}
	return nil
}
