package testkit

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The test binary plays the outside programs of TestStartServerLeavesNothing:
// a server that starts a child of its own, and that child.
func TestMain(m *testing.M) {
	switch {
	case os.Getenv("TESTKIT_PLAY_CHILD") == "1":
		time.Sleep(5 * time.Minute)
		return
	case os.Getenv("TESTKIT_PLAY_SERVER") != "":
		playServer(os.Getenv("TESTKIT_PLAY_SERVER"), os.Getenv("TESTKIT_PIDFILE"))
		return
	}
	os.Exit(m.Run())
}

// playServer starts a child (as Syncthing's monitor or gunicorn does),
// writes its pid to pidfile and serves on addr until killed.
func playServer(addr, pidfile string) {
	child := exec.Command(os.Args[0])
	child.Env = append(os.Environ(), "TESTKIT_PLAY_SERVER=", "TESTKIT_PLAY_CHILD=1")
	if os.Getenv("TESTKIT_PLAY_ESCAPE") == "1" {
		// As Syncthing's monitor does: the child in a group of its own.
		child.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	}
	if err := child.Start(); err != nil {
		os.Exit(3)
	}
	if err := os.WriteFile(pidfile, []byte(strconv.Itoa(child.Process.Pid)), 0o600); err != nil {
		os.Exit(3)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		os.Exit(3)
	}
	http.Serve(ln, http.NotFoundHandler())
}

// TestStartServerLeavesNothing: a server started with StartServer, and the
// child it started, are both gone once the test that started it ends.
func TestStartServerLeavesNothing(t *testing.T) {
	pidfile := filepath.Join(t.TempDir(), "child.pid")
	var server, child int
	t.Run("server", func(t *testing.T) {
		addr := FreeAddr(t)
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), "TESTKIT_PLAY_SERVER="+addr, "TESTKIT_PIDFILE="+pidfile)
		StartServer(t, cmd, addr, 10*time.Second, nil)
		server = cmd.Process.Pid
		WaitUntil(t, 10*time.Second, func() bool {
			b, err := os.ReadFile(pidfile)
			if err == nil {
				child, err = strconv.Atoi(string(b))
			}
			return err == nil
		}, func() string { return "the server wrote no child pid" })
		if !running(server) || !running(child) {
			t.Fatalf("server %d running %v, child %d running %v", server, running(server), child, running(child))
		}
	})
	WaitUntil(t, 10*time.Second, func() bool { return !running(server) && !running(child) }, func() string {
		return "after the test: server " + strconv.Itoa(server) + " running " + strconv.FormatBool(running(server)) +
			", its child " + strconv.Itoa(child) + " running " + strconv.FormatBool(running(child))
	})
}

// recordingTB is a testing.TB whose failures and clean-ups are kept, for
// a test of what Start's clean-up reports.
type recordingTB struct {
	testing.TB
	errs     []string
	cleanups []func()
}

func (r *recordingTB) Helper()          {}
func (r *recordingTB) Cleanup(f func()) { r.cleanups = append(r.cleanups, f) }
func (r *recordingTB) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

// TestStartReportsAnEscapedChild: a program whose child left its process
// group (as Syncthing's monitor's child does) makes the test that started
// it fail, naming the child, and the child is killed.
func TestStartReportsAnEscapedChild(t *testing.T) {
	pidfile := filepath.Join(t.TempDir(), "child.pid")
	rec := &recordingTB{TB: t}
	addr := FreeAddr(t)
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "TESTKIT_PLAY_SERVER="+addr, "TESTKIT_PIDFILE="+pidfile, "TESTKIT_PLAY_ESCAPE=1")
	Start(rec, cmd)
	var child int
	WaitUntil(t, 10*time.Second, func() bool {
		b, err := os.ReadFile(pidfile)
		if err == nil {
			child, err = strconv.Atoi(string(b))
		}
		return err == nil
	}, func() string { return "the server wrote no child pid" })
	t.Cleanup(func() { syscall.Kill(child, syscall.SIGKILL) })
	for i := len(rec.cleanups) - 1; i >= 0; i-- {
		rec.cleanups[i]()
	}
	if len(rec.errs) != 1 || !strings.Contains(rec.errs[0], "pid "+strconv.Itoa(child)) {
		t.Fatalf("the clean-up reported %q, want the escaped child %d", rec.errs, child)
	}
	WaitUntil(t, 5*time.Second, func() bool { return !running(child) }, func() string { return "the escaped child still runs" })
}
