package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// serverSpec is what one start of backupweb needs.
type serverSpec struct {
	// config is the configuration file; %s is replaced by the server's
	// own folder (its state, backups and user file live there).
	config string
	env    []string
	// files are written into the server's folder before it starts.
	files map[string]string
}

// server is a running backupweb.
type server struct {
	cmd *exec.Cmd
	// base is "http://127.0.0.1:PORT".
	base string
	// metrics is the address of the metrics listener.
	metrics string
	// refused counts the "auth refused" lines written so far.
	refused atomic.Int64
	// logDone is closed when standard error has been read to its end.
	logDone chan struct{}
	stopped sync.Once
}

var (
	listenRE  = regexp.MustCompile(`msg=listening .*addr=(\S+)`)
	metricsRE = regexp.MustCompile(`msg="serving metrics" .*addr=(\S+)`)
)

// metricsSection turns the metrics listener on (on a free loopback port),
// so that the bcrypt checks can be counted. Every configuration uses it.
const metricsSection = `[server]
listen = 127.0.0.1:0
metrics_listen = 127.0.0.1:0
access_log = false
state_dir = %s/state
`

// backupsSection is the catalog the server lists at /api/backups.
const backupsSection = `
[backups]
dir = %s/backups
`

// startServer makes a fresh folder under dir, writes the spec's files and
// 20 backups there, starts bin serve with the spec's configuration and
// waits for its "listening" and "serving metrics" lines.
func startServer(bin, dir string, spec serverSpec) (*server, error) {
	home, err := os.MkdirTemp(dir, "server-")
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(home, "backups"), 0o700); err != nil {
		return nil, err
	}
	for i := range 20 {
		name := filepath.Join(home, "backups", fmt.Sprintf("backup-%02d.tar.gz", i))
		if err := os.WriteFile(name, []byte(strings.Repeat("x", 1024*(i+1))), 0o600); err != nil {
			return nil, err
		}
	}
	for name, content := range spec.files {
		if err := os.WriteFile(filepath.Join(home, name), []byte(content), 0o600); err != nil {
			return nil, err
		}
	}
	cfg := filepath.Join(home, "backupweb.ini")
	if err := os.WriteFile(cfg, []byte(strings.ReplaceAll(spec.config, "%s", home)), 0o600); err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "serve", "-config", cfg)
	cmd.Env = append(os.Environ(), spec.env...)
	// The server dies with this program, whatever ends it, and has a
	// process group of its own: a Ctrl-C reaches this program only, which
	// then stops the server itself.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", bin, err)
	}
	s := &server{cmd: cmd, logDone: make(chan struct{})}
	ready := make(chan struct{})
	var early []string // the first lines, to show when it does not start
	go s.readLog(stderr, ready, &early)
	select {
	case <-ready:
		return s, nil
	case <-s.logDone:
		cmd.Wait()
		return nil, fmt.Errorf("backupweb (%s) stopped before listening:\n%s", cfg, strings.Join(early, "\n"))
	case <-time.After(30 * time.Second):
		s.stop()
		return nil, fmt.Errorf("backupweb (%s) did not log both \"listening\" and \"serving metrics\" within 30s", cfg)
	}
}

// readLog reads the server's standard error to its end: it finds the two
// addresses (then closes ready) and counts "auth refused" lines.
func (s *server) readLog(stderr io.Reader, ready chan struct{}, early *[]string) {
	defer close(s.logDone)
	sc := bufio.NewScanner(stderr)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	announced := false
	for sc.Scan() {
		line := sc.Text()
		if strings.Contains(line, `msg="auth refused"`) {
			s.refused.Add(1)
		}
		if announced {
			continue
		}
		if len(*early) < 20 {
			*early = append(*early, line)
		}
		if m := listenRE.FindStringSubmatch(line); m != nil {
			s.base = "http://" + m[1]
		}
		if m := metricsRE.FindStringSubmatch(line); m != nil {
			s.metrics = m[1]
		}
		if s.base != "" && s.metrics != "" {
			announced = true
			close(ready)
		}
	}
}

// stop ends the server (SIGTERM, then SIGKILL after 15 s), waits for it
// and for the end of its log, and returns the number of "auth refused"
// lines it wrote.
func (s *server) stop() int {
	s.stopped.Do(func() {
		s.cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { s.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			s.cmd.Process.Kill()
			<-done
		}
		<-s.logDone
	})
	return int(s.refused.Load())
}

// bcryptWork reads from the server's metrics how many bcrypt comparisons
// it has made and how long they took in all
// (backupweb_bcrypt_check_duration_seconds, count and sum).
func (s *server) bcryptWork() (checks int, total time.Duration, err error) {
	resp, err := http.Get("http://" + s.metrics + "/metrics")
	if err != nil {
		return 0, 0, fmt.Errorf("reading metrics: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, 0, fmt.Errorf("reading metrics: %w", err)
	}
	n, err := metricValue(string(body), "backupweb_bcrypt_check_duration_seconds_count")
	if err != nil {
		return 0, 0, err
	}
	sum, err := metricValue(string(body), "backupweb_bcrypt_check_duration_seconds_sum")
	if err != nil {
		return 0, 0, err
	}
	return int(n), time.Duration(sum * float64(time.Second)), nil
}

// metricValue finds the value of an unlabelled sample in Prometheus text.
func metricValue(text, name string) (float64, error) {
	for _, line := range strings.Split(text, "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			n, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil {
				return 0, fmt.Errorf("metric %s: value %q: %w", name, v, err)
			}
			return n, nil
		}
	}
	return 0, fmt.Errorf("metric %s not found in /metrics", name)
}

// newClient returns an HTTP client with one keep-alive connection, leaving
// from localIP ("": the system's choice), so that the server sees a chosen
// client address and each client is one connection. It follows no
// redirects.
func newClient(localIP string) *http.Client {
	d := &net.Dialer{Timeout: 5 * time.Second}
	if localIP != "" {
		d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(localIP)}
	}
	return &http.Client{
		Timeout: 30 * time.Second,
		Transport: &http.Transport{
			DialContext:         d.DialContext,
			MaxConnsPerHost:     1,
			MaxIdleConnsPerHost: 1,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// closeClients closes the idle connections of clients.
func closeClients(clients []*http.Client) {
	for _, c := range clients {
		c.CloseIdleConnections()
	}
}
