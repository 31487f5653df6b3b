package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/buildinfo"
	"github.com/backupweb/backupweb/internal/testkit"
	"github.com/backupweb/backupweb/internal/testkit/logtest"
)

var listeningRE = regexp.MustCompile(`listening.*addr=(127\.0\.0\.1:\d+)`)

// waitListening waits for serve's "listening" line and returns the address.
func waitListening(t testing.TB, stderr interface{ String() string }, done <-chan int) string {
	t.Helper()
	var addr string
	testkit.WaitUntil(t, 20*time.Second, func() bool {
		if m := listeningRE.FindStringSubmatch(stderr.String()); m != nil {
			addr = m[1]
			return true
		}
		select {
		case code := <-done:
			t.Fatalf("serve exited %d before listening:\n%s", code, stderr.String())
		default:
		}
		return false
	}, func() string { return "no listening line:\n" + stderr.String() })
	return addr
}

func TestServeWithoutConfiguration(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	os.Mkdir("backups", 0o700)
	os.WriteFile(filepath.Join("backups", "nightly.tar.gz"), []byte("backup"), 0o600)

	s := startServe(t, nil, "-listen", "127.0.0.1:0")
	addr, stderr := s.addr, s.log

	resp, err := http.Get("http://" + addr + "/api/me")
	if err != nil {
		t.Fatal(err)
	}
	var me map[string]string
	json.NewDecoder(resp.Body).Decode(&me)
	resp.Body.Close()
	if me["username"] != "anonymous" || me["auth_type"] != "none" {
		t.Fatalf("/api/me = %v", me)
	}
	resp, err = http.Get("http://" + addr + "/api/backups")
	if err != nil {
		t.Fatal(err)
	}
	var list struct{ Backups []struct{ Name string } }
	json.NewDecoder(resp.Body).Decode(&list)
	resp.Body.Close()
	if len(list.Backups) != 1 || list.Backups[0].Name != "nightly.tar.gz" {
		t.Fatalf("/api/backups = %+v", list)
	}

	if code := s.stop(); code != exitOK {
		t.Fatalf("exit %d after shutdown", code)
	}
	logs := stderr.String()
	if want := `version="` + buildinfo.Get().String() + `"`; !strings.Contains(logs, want) {
		t.Errorf("the listening line does not carry %s:\n%s", want, logs)
	}
	if n := strings.Count(logs, "authentication is off"); n != 1 {
		t.Errorf("want one warning that authentication is off, got %d:\n%s", n, logs)
	}
}

func TestServeRefusesBadConfiguration(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad.ini")
	os.WriteFile(path, []byte("[authentication]\ntype = basic\nusername = u\n"), 0o600)
	c, _, stderr := testCLI(context.Background(), "", nil)
	if code := c.main([]string{"serve", "-config", path, "-listen", "127.0.0.1:0"}); code != exitError {
		t.Fatalf("exit %d, want 1", code)
	}
	if out := stderr.String(); !strings.Contains(out, "error:") || !strings.Contains(out, "password") || strings.Contains(out, "listening") {
		t.Fatalf("stderr:\n%s", out)
	}
}

func TestServeJSONLogs(t *testing.T) {
	t.Chdir(t.TempDir())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c, _, stderr := testCLI(ctx, "", nil)
	done := make(chan int, 1)
	go func() { done <- c.main([]string{"serve", "-listen", "127.0.0.1:0", "-log-format", "json"}) }()
	testkit.WaitUntil(t, 20*time.Second, func() bool { return strings.Contains(stderr.String(), `"msg":"listening"`) },
		func() string { return "no JSON listening line:\n" + stderr.String() })
	cancel()
	<-done
	for _, line := range strings.Split(strings.TrimSpace(stderr.String()), "\n") {
		if !json.Valid([]byte(line)) {
			t.Errorf("not a JSON line: %q", line)
		}
	}
}

// TestServeProcessSIGTERM runs the real program and stops it with SIGTERM:
// the contract's graceful shutdown with exit status 0.
func TestServeProcessSIGTERM(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the program; skipped with -short")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "backupweb")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "serve", "-listen", "127.0.0.1:0")
	cmd.Dir = dir
	stderr := &logtest.Buffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan int, 1)
	go func() { cmd.Wait(); done <- cmd.ProcessState.ExitCode() }()
	addr := waitListening(t, stderr, done)
	resp, err := http.Get("http://" + addr + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("/healthz: %d", resp.StatusCode)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("exit %d after SIGTERM:\n%s", code, stderr.String())
		}
	case <-time.After(15 * time.Second):
		cmd.Process.Kill()
		t.Fatal("no exit after SIGTERM")
	}
}

// TestServeMetricsListener: with metrics_listen, a second listener serves
// /metrics, and the access log writes one line per request.
func TestServeMetricsListener(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	os.WriteFile("backupweb.ini", []byte("[server]\nlisten = 127.0.0.1:0\nmetrics_listen = 127.0.0.1:0\n"), 0o600)
	s := startServe(t, nil)
	addr, stderr := s.addr, s.log
	m := regexp.MustCompile(`serving metrics" addr=(127\.0\.0\.1:\d+)`).FindStringSubmatch(stderr.String())
	if m == nil {
		t.Fatalf("no metrics listener:\n%s", stderr)
	}
	if resp, err := http.Get("http://" + addr + "/api/me?state=SECRET"); err == nil {
		resp.Body.Close()
	}
	resp, err := http.Get("http://" + m[1] + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), "backupweb_build_info{") || !strings.Contains(string(body), `backupweb_http_requests_total{code="2xx",route="GET /api/me"} 1`) {
		t.Fatalf("/metrics:\n%s", body)
	}
	s.stop()
	if logs := stderr.String(); !strings.Contains(logs, "msg=request method=GET path=/api/me status=200") || strings.Contains(logs, "SECRET") {
		t.Errorf("access log:\n%s", logs)
	}
}

func TestHealthcheck(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/healthz" {
			http.Error(w, "not ready", http.StatusServiceUnavailable)
			return
		}
		w.Write([]byte("ok"))
	}))
	defer srv.Close()
	for path, want := range map[string]int{"/healthz": exitOK, "/readyz": exitError} {
		c, _, stderr := testCLI(context.Background(), "", nil)
		if code := c.main([]string{"healthcheck", "-url", srv.URL + path}); code != want {
			t.Errorf("healthcheck %s: exit %d, want %d (%s)", path, code, want, stderr)
		}
	}
	c, _, _ := testCLI(context.Background(), "", nil)
	if code := c.main([]string{"healthcheck", "-url", "http://127.0.0.1:1/healthz"}); code != exitError {
		t.Errorf("nothing listening: exit %d, want 1", code)
	}
}
