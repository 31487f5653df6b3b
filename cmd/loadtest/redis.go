package main

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/backupweb/backupweb/internal/toolstest"
)

// redisServer is a redis-server this program started.
type redisServer struct {
	cmd    *exec.Cmd
	addr   string // 127.0.0.1:PORT
	exited chan struct{}
}

// startRedis starts redis-server on a free loopback port, in a folder of
// its own under dir, without persistence. When redis-server is not
// installed it returns a reason to skip, or an error under
// BACKUPWEB_REQUIRE_TOOLS=1.
func startRedis(dir string) (rs *redisServer, skip string, err error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if toolstest.RequireTools() {
			return nil, "", fmt.Errorf("redis-server is required (BACKUPWEB_REQUIRE_TOOLS=1) but not found: apt-get install redis-server")
		}
		return nil, "redis-server not found (Debian package redis-server); set BACKUPWEB_REQUIRE_TOOLS=1 to make this a failure", nil
	}
	home, err := os.MkdirTemp(dir, "redis-")
	if err != nil {
		return nil, "", err
	}
	port, err := freePort()
	if err != nil {
		return nil, "", err
	}
	rs = &redisServer{addr: "127.0.0.1:" + strconv.Itoa(port), exited: make(chan struct{})}
	rs.cmd = exec.Command(bin, "--bind", "127.0.0.1", "--port", strconv.Itoa(port), "--dir", home,
		"--save", "", "--appendonly", "no", "--daemonize", "no", "--protected-mode", "no",
		"--logfile", filepath.Join(home, "redis.log"))
	rs.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	if err := rs.cmd.Start(); err != nil {
		return nil, "", fmt.Errorf("starting redis-server: %w", err)
	}
	go func() { rs.cmd.Wait(); close(rs.exited) }()
	deadline := time.Now().Add(10 * time.Second)
	for !rs.answers() {
		select {
		case <-rs.exited:
			log, _ := os.ReadFile(filepath.Join(home, "redis.log"))
			return nil, "", fmt.Errorf("redis-server exited at start:\n%s", log)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			rs.stop()
			return nil, "", fmt.Errorf("redis-server on %s did not answer PING within 10s", rs.addr)
		}
	}
	return rs, "", nil
}

// answers reports whether the server answers PING.
func (rs *redisServer) answers() bool {
	c, err := net.DialTimeout("tcp", rs.addr, time.Second)
	if err != nil {
		return false
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(time.Second))
	fmt.Fprint(c, "PING\r\n")
	line, err := bufio.NewReader(c).ReadString('\n')
	return err == nil && strings.HasPrefix(line, "+PONG")
}

// stop ends the server (SIGTERM, then SIGKILL after 5 s) and waits for it.
func (rs *redisServer) stop() {
	rs.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-rs.exited:
	case <-time.After(5 * time.Second):
		rs.cmd.Process.Kill()
		<-rs.exited
	}
}

// freePort returns a loopback TCP port that was free a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
