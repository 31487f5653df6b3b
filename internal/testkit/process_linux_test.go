package testkit

import (
	"bytes"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
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

// running reports whether process pid is still running: it exists and is
// not a zombie waiting for a parent to reap it (an orphan's new parent
// may never do that in a container).
func running(pid int) bool {
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(stat, ')')
	return i >= 0 && i+2 < len(stat) && stat[i+2] != 'Z'
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
