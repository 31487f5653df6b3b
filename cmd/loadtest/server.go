package main

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"
)

// scenarioDef describes one load scenario.
type scenarioDef struct {
	flooders int
	// config is the configuration file; %s is replaced by the work dir.
	config string
	env    []string
	// files are written into the work dir before the server starts.
	files map[string]string
	// login prepares the measuring client and returns its request.
	login func(c *http.Client, base string) (func() (int, error), error)
	// flood returns one flooding client's request.
	flood func(c *http.Client, base string, i int) func(ctx context.Context) int
}

type server struct {
	cmd  *exec.Cmd
	base string
}

var listenRE = regexp.MustCompile(`listening.*addr=(\S+)`)

// startServer writes the scenario's files, starts bin serve and waits for
// its "listening" line.
func startServer(bin, dir string, sc scenarioDef) (*server, error) {
	if err := os.MkdirAll(filepath.Join(dir, "backups"), 0o700); err != nil {
		return nil, err
	}
	for i := range 20 {
		name := filepath.Join(dir, "backups", fmt.Sprintf("backup-%02d.tar.gz", i))
		if err := os.WriteFile(name, []byte(strings.Repeat("x", 1024*(i+1))), 0o600); err != nil {
			return nil, err
		}
	}
	for name, content := range sc.files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			return nil, err
		}
	}
	cfg := filepath.Join(dir, "backupweb.ini")
	if err := os.WriteFile(cfg, []byte(strings.ReplaceAll(sc.config, "%s", dir)), 0o600); err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "serve", "-config", cfg)
	cmd.Env = append(os.Environ(), sc.env...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := listenRE.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case addr <- m[1]:
				default:
				}
			}
		}
	}()
	select {
	case a := <-addr:
		return &server{cmd: cmd, base: "http://" + a}, nil
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		return nil, fmt.Errorf("server did not start listening within 30s")
	}
}

func (s *server) stop() {
	s.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		s.cmd.Process.Kill()
	}
}

// newClient returns an HTTP client whose connections leave from localIP,
// so the server sees a distinct client address per role.
func newClient(localIP string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(localIP)}, Timeout: 5 * time.Second}
	return &http.Client{
		Timeout: 30 * time.Second,
		Transport: &http.Transport{
			DialContext:         d.DialContext,
			MaxIdleConnsPerHost: 128,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}
