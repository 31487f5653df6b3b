package redistest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/testkit/porttest"
	"github.com/backupweb/backupweb/internal/testkit/toolstest"
)

// MasterName is the name the Sentinels of StartSentinel monitor.
const MasterName = "mymaster"

// DownAfter is how long the Sentinels and the cluster nodes of this kit
// wait before they take a silent master for failed: short, so that a
// failover in a test takes a few seconds.
const DownAfter = time.Second

// Sentinel is one master, its replicas and the Sentinels that watch
// them, all real processes on loopback ports.
type Sentinel struct {
	t testing.TB
	// Servers are the data nodes: the first starts as the master.
	Servers []*Server
	// Sentinels are the redis-server --sentinel processes.
	Sentinels []*Server
}

// StartSentinel runs a master with replicas replicas and sentinels
// Sentinels (quorum: a majority of them) for the rest of the test. Of o,
// Password is used (required of clients by every data node, and given by
// the replicas and the Sentinels).
func StartSentinel(t testing.TB, o Options, replicas, sentinels int) *Sentinel {
	t.Helper()
	bin := toolstest.Need(t, "redis-server", "redis-server")
	toolstest.Need(t, "redis-cli", "redis-tools")
	h := &Sentinel{t: t}
	for i := range 1 + replicas {
		s := &Server{t: t, bin: bin, dir: t.TempDir(), opts: Options{Password: o.Password}}
		port, err := porttest.Free()
		s.must(err)
		s.port = port
		s.extra = []string{"--repl-diskless-sync", "yes", "--repl-diskless-sync-delay", "0"}
		if i > 0 {
			s.extra = append(s.extra, "--replicaof", "127.0.0.1", strconv.Itoa(h.Servers[0].port))
		}
		s.must(s.start())
		t.Cleanup(s.Stop)
		h.Servers = append(h.Servers, s)
	}
	for range sentinels {
		s := &Server{t: t, bin: bin, dir: t.TempDir(), sentinel: true}
		auth := ""
		if o.Password != "" {
			auth = fmt.Sprintf("sentinel auth-pass %s %s\n", MasterName, o.Password)
		}
		port, err := porttest.Free()
		s.must(err)
		s.port = port
		conf := fmt.Sprintf("port %d\nbind 127.0.0.1\nprotected-mode no\ndir %s\nlogfile %s\n"+
			"sentinel monitor %s 127.0.0.1 %d %d\nsentinel down-after-milliseconds %s %d\n"+
			"sentinel failover-timeout %s 5000\nsentinel parallel-syncs %s 2\n"+auth,
			port, s.dir, filepath.Join(s.dir, "redis.log"),
			MasterName, h.Servers[0].port, sentinels/2+1, MasterName, DownAfter.Milliseconds(), MasterName, MasterName)
		s.must(os.WriteFile(filepath.Join(s.dir, "sentinel.conf"), []byte(conf), 0o600))
		s.must(s.start())
		t.Cleanup(s.Stop)
		h.Sentinels = append(h.Sentinels, s)
	}
	// Ready when every Sentinel knows the replicas and the other
	// Sentinels, and the replicas are in sync.
	h.waitFor(30*time.Second, "the Sentinels to know every replica and each other", func() bool {
		for _, s := range h.Sentinels {
			m := cliMap(s, "SENTINEL", "MASTER", MasterName)
			if m["num-slaves"] != strconv.Itoa(replicas) || m["num-other-sentinels"] != strconv.Itoa(sentinels-1) || m["flags"] != "master" {
				return false
			}
		}
		return h.Servers[0].syncedReplicas() == replicas
	})
	return h
}

// Addrs are the Sentinels' addresses.
func (h *Sentinel) Addrs() []string {
	out := make([]string, len(h.Sentinels))
	for i, s := range h.Sentinels {
		out[i] = s.Addr()
	}
	return out
}

// Config is what reaches the master through the Sentinels.
func (h *Sentinel) Config() Config {
	c := h.Servers[0].Config()
	c.URL = "redis://127.0.0.1/0"
	c.SentinelAddresses = h.Addrs()
	c.SentinelMaster = MasterName
	c.ReplicasAcked = 1
	c.ReplicaTimeout = 500 * time.Millisecond
	c.CommandTimeout = 2 * time.Second
	return c
}

// Master returns the data node the Sentinels name as master now.
func (h *Sentinel) Master() *Server {
	for _, s := range h.Sentinels {
		if !s.running() {
			continue
		}
		addr := cli(s, "SENTINEL", "GET-MASTER-ADDR-BY-NAME", MasterName)
		f := strings.Fields(addr)
		if len(f) != 2 {
			continue
		}
		for _, d := range h.Servers {
			if strconv.Itoa(d.port) == f[1] {
				return d
			}
		}
	}
	h.t.Fatal("no Sentinel names a master")
	return nil
}

// WaitFailover waits until the Sentinels name a master other than old
// that answers as master, and returns it.
func (h *Sentinel) WaitFailover(old *Server, within time.Duration) *Server {
	h.t.Helper()
	var now *Server
	h.waitFor(within, "a failover away from "+old.Addr(), func() bool {
		now = h.Master()
		return now != old && strings.Contains(cli(now, "ROLE"), "master")
	})
	return now
}

func (h *Sentinel) waitFor(within time.Duration, what string, ok func() bool) {
	h.t.Helper()
	waitFor(h.t, within, what, ok)
}

// Cluster is a Redis Cluster made by redis-cli --cluster create.
type Cluster struct {
	t testing.TB
	// Nodes are its nodes, masters first as redis-cli made them.
	Nodes []*Server
}

// StartCluster runs a cluster of masters masters with replicas
// replicas each, for the rest of the test. Of o, Password is used.
func StartCluster(t testing.TB, o Options, masters, replicas int) *Cluster {
	t.Helper()
	bin := toolstest.Need(t, "redis-server", "redis-server")
	clibin := toolstest.Need(t, "redis-cli", "redis-tools")
	c := &Cluster{t: t}
	addrs := []string{}
	for range masters * (1 + replicas) {
		s := &Server{t: t, bin: bin, dir: t.TempDir(), opts: Options{Password: o.Password}}
		port, err := porttest.Free()
		s.must(err)
		bus, err := porttest.Free()
		s.must(err)
		s.port = port
		s.extra = []string{"--cluster-enabled", "yes", "--cluster-config-file", filepath.Join(s.dir, "nodes.conf"),
			"--cluster-node-timeout", strconv.FormatInt(DownAfter.Milliseconds(), 10), "--cluster-port", strconv.Itoa(bus),
			"--repl-diskless-sync", "yes", "--repl-diskless-sync-delay", "0"}
		s.must(s.start())
		t.Cleanup(s.Stop)
		c.Nodes = append(c.Nodes, s)
		addrs = append(addrs, s.Addr())
	}
	args := append(auth(o.Password), "--cluster", "create")
	args = append(args, addrs...)
	args = append(args, "--cluster-replicas", strconv.Itoa(replicas), "--cluster-yes")
	if out, err := exec.Command(clibin, args...).CombinedOutput(); err != nil {
		t.Fatalf("redis-cli --cluster create: %v\n%s", err, out)
	}
	waitFor(t, 30*time.Second, "the cluster to be ok on every node with every replica in sync", func() bool {
		for _, s := range c.Nodes {
			if !strings.Contains(cli(s, "CLUSTER", "INFO"), "cluster_state:ok") {
				return false
			}
		}
		n := 0
		for _, s := range c.Nodes {
			if strings.HasPrefix(cli(s, "ROLE"), "master") {
				n += s.syncedReplicas()
			}
		}
		return n == masters*replicas
	})
	return c
}

// Addrs are the nodes' addresses.
func (c *Cluster) Addrs() []string {
	out := make([]string, len(c.Nodes))
	for i, s := range c.Nodes {
		out[i] = s.Addr()
	}
	return out
}

// Config is what reaches the cluster from its nodes.
func (c *Cluster) Config() Config {
	cfg := c.Nodes[0].Config()
	cfg.URL = "redis://127.0.0.1/0"
	cfg.ClusterAddresses = c.Addrs()
	cfg.ReplicasAcked = 1
	cfg.ReplicaTimeout = 500 * time.Millisecond
	cfg.CommandTimeout = 2 * time.Second
	return cfg
}

// MasterOf returns the node that serves key's slot as master now.
func (c *Cluster) MasterOf(key string) *Server {
	c.t.Helper()
	var s *Server
	waitFor(c.t, 10*time.Second, "a node that serves the slot of "+key, func() bool {
		s = c.Slots()[Slot(key)]
		return s != nil
	})
	return s
}

// Slots maps each slot to the node that serves it as master now, as
// the first live node sees it.
func (c *Cluster) Slots() map[int]*Server {
	out := map[int]*Server{}
	for _, s := range c.Nodes {
		if !s.running() {
			continue
		}
		for _, line := range strings.Split(cli(s, "CLUSTER", "NODES"), "\n") {
			f := strings.Fields(line)
			if len(f) < 9 {
				continue
			}
			// A master the node takes for failed (fail, not fail?: a
			// missed ping under load) serves nothing.
			flags := strings.Split(f[2], ",")
			if !slices.Contains(flags, "master") || slices.Contains(flags, "fail") {
				continue
			}
			addr, _, _ := strings.Cut(f[1], "@")
			var node *Server
			for _, d := range c.Nodes {
				if d.Addr() == addr {
					node = d
				}
			}
			for _, r := range f[8:] {
				lo, hi, ok := strings.Cut(r, "-")
				if !ok {
					hi = lo
				}
				a, err1 := strconv.Atoi(lo)
				b, err2 := strconv.Atoi(hi)
				if err1 != nil || err2 != nil {
					continue // a slot being moved: [N->-id]
				}
				for n := a; n <= b; n++ {
					out[n] = node
				}
			}
		}
		break
	}
	return out
}

// Slot is the cluster slot of key: CRC16 of its hash tag (the part
// between the first { and the next }, when not empty) or of the key,
// modulo 16384.
func Slot(key string) int {
	if i := strings.IndexByte(key, '{'); i >= 0 {
		if j := strings.IndexByte(key[i+1:], '}'); j > 0 {
			key = key[i+1 : i+1+j]
		}
	}
	var crc uint16
	for i := 0; i < len(key); i++ {
		crc ^= uint16(key[i]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return int(crc) % 16384
}

// WaitFailover waits until a node other than old serves key's slot as
// master, the cluster is ok again on every live node, and returns it.
func (c *Cluster) WaitFailover(old *Server, key string, within time.Duration) *Server {
	c.t.Helper()
	var now *Server
	waitFor(c.t, within, "a failover of "+key+"'s slot away from "+old.Addr(), func() bool {
		for _, s := range c.Nodes {
			if s.running() && !strings.Contains(cli(s, "CLUSTER", "INFO"), "cluster_state:ok") {
				return false
			}
		}
		now = c.Slots()[Slot(key)]
		return now != nil && now != old
	})
	return now
}

// Kill sends SIGKILL to the server, at once, and waits for it to die.
func (s *Server) Kill() {
	if s.cmd == nil {
		return
	}
	s.cmd.Process.Signal(syscall.SIGKILL)
	<-s.exited
	s.cmd = nil
}

// Pause stops the server's process (SIGSTOP): it holds its connections
// and answers nothing until Resume.
func (s *Server) Pause() {
	s.paused.Store(true)
	s.signal(syscall.SIGSTOP)
}

// Resume lets a paused server run again (SIGCONT).
func (s *Server) Resume() {
	s.signal(syscall.SIGCONT)
	s.paused.Store(false)
}

func (s *Server) signal(sig syscall.Signal) {
	if s.cmd != nil {
		s.cmd.Process.Signal(sig)
	}
}

// running reports whether the server has been started and not stopped,
// and is not paused: whether it can be asked anything.
func (s *Server) running() bool { return s.cmd != nil && !s.paused.Load() }

// syncedReplicas is how many replicas the server reports online.
func (s *Server) syncedReplicas() int {
	n := 0
	for _, line := range strings.Split(cli(s, "INFO", "replication"), "\n") {
		if strings.HasPrefix(line, "slave") && strings.Contains(line, "state=online") {
			n++
		}
	}
	return n
}

// cli runs redis-cli against s and returns its output ("" on failure).
func cli(s *Server, args ...string) string {
	pw := s.opts.Password
	if s.sentinel {
		pw = ""
	}
	// A server stopped by a test (SIGSTOP) would hold redis-cli forever.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "redis-cli", append(append(auth(pw), "-h", "127.0.0.1", "-p", strconv.Itoa(s.port)), args...)...).Output()
	if err != nil {
		return ""
	}
	return strings.ReplaceAll(string(out), "\r", "")
}

// auth is redis-cli's arguments for password.
func auth(password string) []string {
	if password == "" {
		return nil
	}
	return []string{"-a", password, "--no-auth-warning"}
}

// cliMap reads a reply of alternating names and values.
func cliMap(s *Server, args ...string) map[string]string {
	f := strings.Split(strings.TrimSpace(cli(s, args...)), "\n")
	m := map[string]string{}
	for i := 0; i+1 < len(f); i += 2 {
		m[f[i]] = f[i+1]
	}
	return m
}

func waitFor(t testing.TB, within time.Duration, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("waited %s for %s", within, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Keys lists the keys of s that match pattern (KEYS: for tests' small
// data sets only).
func (s *Server) Keys(pattern string) []string {
	return strings.Fields(cli(s, "KEYS", pattern))
}

// Calls is how many times s has run command (lower case, as INFO
// commandstats names it: "wait", "evalsha"), from its INFO commandstats.
func (s *Server) Calls(command string) int {
	for _, line := range strings.Split(cli(s, "INFO", "commandstats"), "\n") {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), "cmdstat_"+command+":calls=")
		if !ok {
			continue
		}
		n, _ := strconv.Atoi(strings.Split(rest, ",")[0])
		return n
	}
	return 0
}
