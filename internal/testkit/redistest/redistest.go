// Package redistest runs a real redis-server for tests: on a free loopback
// port (or a unix socket) in a temporary folder, with a password, an ACL
// user or TLS when asked, stopped when the test ends. A test is skipped
// when redis-server is not installed (Debian package redis-server), and
// fails instead under BACKUPWEB_REQUIRE_TOOLS=1.
package redistest

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/testkit/certtest"
	"github.com/backupweb/backupweb/internal/testkit/porttest"
	"github.com/backupweb/backupweb/internal/testkit/toolstest"
)

// Options choose how the server runs. The zero value is a plain server on
// a loopback port without a password.
type Options struct {
	// Password is required of clients (requirepass); with User, it is
	// that ACL user's password instead.
	Password string
	// User is an ACL user allowed every key and command.
	User string
	// TLS serves TLS only, with a certificate signed by a fresh test CA
	// (Server.CAFile).
	TLS bool
	// Unix serves on a unix socket only.
	Unix bool
	// Persist keeps the data across Restart (append-only file).
	Persist bool
}

// Server is a running redis-server.
type Server struct {
	t     testing.TB
	bin   string
	dir   string
	opts  Options
	port  int
	extra []string // more arguments (cluster and replica nodes)
	// sentinel runs redis-server --sentinel on the sentinel.conf in dir.
	sentinel bool
	cmd      *exec.Cmd
	exited   chan struct{}
	// paused is set between Pause and Resume: the server answers nothing.
	paused atomic.Bool
	// CAFile is the PEM file of the CA that signed the server's
	// certificate (Options.TLS).
	CAFile string
	// Socket is the unix socket's path (Options.Unix).
	Socket string
}

// Start runs a server for the rest of the test.
func Start(t testing.TB, o Options) *Server {
	t.Helper()
	bin := toolstest.Need(t, "redis-server", "redis-server")
	s := &Server{t: t, bin: bin, dir: t.TempDir(), opts: o}
	if o.TLS {
		s.CAFile = certtest.WriteLocalhost(t, s.dir)
	}
	if o.Unix {
		// Socket paths are short (108 bytes): not under the test's folder.
		d, err := os.MkdirTemp("", "redis")
		s.must(err)
		t.Cleanup(func() { os.RemoveAll(d) })
		s.Socket = filepath.Join(d, "redis.sock")
	} else {
		port, err := porttest.Free()
		s.must(err)
		s.port = port
	}
	s.must(s.start())
	t.Cleanup(s.Stop)
	return s
}

// Launch is Start for a program rather than a test (cmd/loadtest): a
// plain server of bin on a free loopback port, in a new folder under
// dir, which the caller stops with Stop. Restart and Start are for tests
// only.
func Launch(bin, dir string) (*Server, error) {
	home, err := os.MkdirTemp(dir, "redis-")
	if err != nil {
		return nil, err
	}
	port, err := porttest.Free()
	if err != nil {
		return nil, err
	}
	s := &Server{bin: bin, dir: home, port: port}
	if err := s.start(); err != nil {
		return nil, err
	}
	return s, nil
}

// Addr is the server's loopback address, host:port (not for Unix).
func (s *Server) Addr() string { return "127.0.0.1:" + strconv.Itoa(s.port) }

// must fails the test on err.
func (s *Server) must(err error) {
	if err != nil {
		s.t.Helper()
		s.t.Fatal(err)
	}
}

// Config is what reaches a server: the fields of redisstore.Options, in
// the same order, so that a test converts one into the other
// (redisstore.Options(srv.Config())) without this kit importing the store.
type Config struct {
	URL               string
	Password          string
	Prefix            string
	TLSCA             string
	ConnectTimeout    time.Duration
	CommandTimeout    time.Duration
	SentinelAddresses []string
	SentinelMaster    string
	SentinelPassword  string
	ClusterAddresses  []string
	ReplicasAcked     int
	ReplicaTimeout    time.Duration
}

// Config returns what reaches this server.
func (s *Server) Config() Config {
	return Config{
		URL:            s.URL(),
		Password:       s.opts.Password,
		Prefix:         "test:",
		TLSCA:          s.CAFile,
		ConnectTimeout: 500 * time.Millisecond,
		CommandTimeout: 500 * time.Millisecond,
	}
}

// URL is the server's [redis] url.
func (s *Server) URL() string {
	user := ""
	if s.opts.User != "" {
		user = s.opts.User + "@"
	}
	switch {
	case s.opts.Unix:
		return "unix://" + s.Socket
	case s.opts.TLS:
		return "rediss://" + user + "localhost:" + strconv.Itoa(s.port) + "/0"
	default:
		return "redis://" + user + "127.0.0.1:" + strconv.Itoa(s.port) + "/0"
	}
}

func (s *Server) start() error {
	args := []string{"--bind", "127.0.0.1", "--dir", s.dir, "--save", "", "--daemonize", "no",
		"--logfile", filepath.Join(s.dir, "redis.log"), "--protected-mode", "no"}
	if s.opts.Persist {
		args = append(args, "--appendonly", "yes", "--appendfsync", "always")
	} else {
		args = append(args, "--appendonly", "no")
		os.RemoveAll(filepath.Join(s.dir, "appendonlydir"))
		os.Remove(filepath.Join(s.dir, "dump.rdb"))
	}
	switch {
	case s.opts.Unix:
		args = append(args, "--port", "0", "--unixsocket", s.Socket, "--unixsocketperm", "700")
	case s.opts.TLS:
		args = append(args, "--port", "0", "--tls-port", strconv.Itoa(s.port),
			"--tls-cert-file", filepath.Join(s.dir, "server.pem"), "--tls-key-file", filepath.Join(s.dir, "server.key"),
			"--tls-ca-cert-file", s.CAFile, "--tls-auth-clients", "no")
	default:
		args = append(args, "--port", strconv.Itoa(s.port))
	}
	switch {
	case s.opts.User != "":
		acl := filepath.Join(s.dir, "users.acl")
		rules := "user default off\nuser " + s.opts.User + " on >" + s.opts.Password + " ~* &* +@all\n"
		if err := os.WriteFile(acl, []byte(rules), 0o600); err != nil {
			return err
		}
		args = append(args, "--aclfile", acl)
	case s.opts.Password != "":
		// masterauth: a replica (or a demoted master) gives it to its master.
		args = append(args, "--requirepass", s.opts.Password, "--masterauth", s.opts.Password)
	}
	args = append(args, s.extra...)
	if s.sentinel {
		args = []string{filepath.Join(s.dir, "sentinel.conf"), "--sentinel"}
	}
	s.cmd = exec.Command(s.bin, args...)
	// Its own process group: an interrupt at the terminal reaches the
	// program, which stops the server, not the server first.
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	if err := s.cmd.Start(); err != nil {
		s.cmd = nil
		return fmt.Errorf("starting redis-server: %w", err)
	}
	s.exited = make(chan struct{})
	go func(cmd *exec.Cmd, done chan struct{}) { cmd.Wait(); close(done) }(s.cmd, s.exited)
	deadline := time.Now().Add(10 * time.Second)
	for !s.answers() {
		select {
		case <-s.exited:
			s.cmd = nil
			log, _ := os.ReadFile(filepath.Join(s.dir, "redis.log"))
			return fmt.Errorf("redis-server exited at start:\n%s", log)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			s.Stop()
			return fmt.Errorf("redis-server on %s did not answer within 10s", s.URL())
		}
	}
	return nil
}

// answers reports whether the server accepts a connection and a PING.
func (s *Server) answers() bool {
	var c net.Conn
	var err error
	switch {
	case s.opts.Unix:
		c, err = net.DialTimeout("unix", s.Socket, time.Second)
	case s.opts.TLS:
		pool := x509.NewCertPool()
		pem, _ := os.ReadFile(s.CAFile)
		pool.AppendCertsFromPEM(pem)
		c, err = tls.DialWithDialer(&net.Dialer{Timeout: time.Second}, "tcp", "127.0.0.1:"+strconv.Itoa(s.port), &tls.Config{RootCAs: pool, ServerName: "localhost"})
	default:
		c, err = net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(s.port), time.Second)
	}
	if err != nil {
		return false
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(time.Second))
	fmt.Fprint(c, "PING\r\n")
	line, err := bufio.NewReader(c).ReadString('\n')
	// Any answer will do: +PONG, or -NOAUTH when a password is required.
	return err == nil && (strings.HasPrefix(line, "+") || strings.HasPrefix(line, "-"))
}

// Stop stops the server (SIGTERM, then SIGKILL) and waits for it.
func (s *Server) Stop() {
	if s.cmd == nil {
		return
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(5 * time.Second):
		s.cmd.Process.Kill()
		<-s.exited
	}
	s.cmd = nil
}

// Persist sets Options.Persist for the next Start: false makes the server
// come back empty.
func (s *Server) Persist(on bool) { s.opts.Persist = on }

// Start starts the server again after Stop, on the same address.
func (s *Server) Start() { s.must(s.start()) }
