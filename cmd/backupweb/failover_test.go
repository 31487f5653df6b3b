package main

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/testkit/redistest"
)

// The failover tests run the load tool's failover scenario
// (internal/cmd/loadtest -targets) through two instances while the
// Redis behind them fails over: alice's session, a session signed out
// before the fault and no session at all, at 32 connections. The tool
// fails on any request admitted without a valid session, on a sign-out,
// and on any answer to the valid session other than 200 or 503 with
// Retry-After; its counts are printed in the test log.

// loadToolBin builds internal/cmd/loadtest into the test's own folder,
// removed when the test ends (the build cache makes the second build cheap).
func loadToolBin(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "loadtest")
	if out, err := exec.Command("go", "build", "-o", bin, "../../internal/cmd/loadtest").CombinedOutput(); err != nil {
		t.Fatalf("building the load tool: %v\n%s", err, out)
	}
	return bin
}

// failoverLoad is a running load tool.
type failoverLoad struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	lines chan string
	out   strings.Builder
}

// startFailoverLoad runs the load tool's failover scenario through
// targets as alice, and returns once it has signed in and begun.
func startFailoverLoad(t *testing.T, targets ...string) *failoverLoad {
	t.Helper()
	cmd := exec.Command(loadToolBin(t), "-targets", strings.Join(targets, ","), "-user", "alice",
		"-conns", "32", "-duration", "5m", "-until-eof")
	cmd.Env = append(os.Environ(), "LOADTEST_PASSWORD=pw-alice")
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	l := &failoverLoad{cmd: cmd, stdin: stdin, lines: make(chan string, 16)}
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			l.lines <- sc.Text()
		}
		close(l.lines)
	}()
	t.Cleanup(func() {
		stdin.Close()
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	for line := range l.lines {
		fmt.Fprintln(&l.out, line)
		if strings.HasPrefix(line, "failover: loading") {
			return l
		}
	}
	t.Fatalf("the load tool ended before its load began:\n%s", l.out.String())
	return nil
}

// finish ends the load, logs the tool's counts and fails t when the
// tool found anything wrong.
func (l *failoverLoad) finish(t *testing.T) {
	t.Helper()
	l.stdin.Close()
	for line := range l.lines {
		fmt.Fprintln(&l.out, line)
	}
	err := l.cmd.Wait()
	t.Logf("the load tool through two instances during the failover:\n%s", l.out.String())
	if err != nil {
		t.Fatalf("the load tool found the failover wrong (%v)", err)
	}
}

// haInstances starts two instances of flask-login for alice on the
// Redis reached by redisKeys (the [redis] lines that name it; a replica
// wait of half a second unless they set one).
func haInstances(t *testing.T, redisKeys string) (a, b *instance) {
	if !strings.Contains(redisKeys, "replica_timeout") {
		redisKeys += "\nreplica_timeout = 500ms"
	}
	dir := t.TempDir()
	users := addUsers(t, dir, "alice")
	conf := fmt.Sprintf(`[server]
listen = 127.0.0.1:0
store = redis
state_dir = %s
access_log = false
[redis]
url = redis://127.0.0.1/0
%s
prefix = failover:
[backups]
dir = %s
[authentication]
type = flask-login
use_bcrypt = true
users_file = %s
`, filepath.Join(dir, "state"), redisKeys, dir, users)
	return startInstance(t, conf), startInstance(t, conf)
}

// sentinelKeys are the [redis] lines that name h's Sentinels.
func sentinelKeys(h *redistest.Sentinel) string {
	return fmt.Sprintf("sentinel_addresses = %s\nsentinel_master = %s", strings.Join(h.Addrs(), ", "), redistest.MasterName)
}

// signInAgain waits until a sign-in (a write a replica must confirm)
// works on every instance, and returns how long after since that was.
func signInAgain(t *testing.T, since time.Time, ins ...*instance) time.Duration {
	t.Helper()
	for _, in := range ins {
		deadline := time.Now().Add(60 * time.Second)
		for {
			s, code := signIn(t, in.url, "alice", "pw-alice")
			if s != "" {
				break
			}
			if code != http.StatusServiceUnavailable || time.Now().After(deadline) {
				t.Fatalf("sign-in on %s after the failover: %d", in.url, code)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return time.Since(since)
}

// TestFailoverThroughInstancesSentinelKill: Sentinel (one master, two
// replicas, three Sentinels), the master killed (SIGKILL) under the load
// tool's failover scenario.
func TestFailoverThroughInstancesSentinelKill(t *testing.T) {
	h := redistest.StartSentinel(t, redistest.Options{}, 2, 3)
	a, b := haInstances(t, sentinelKeys(h))
	load := startFailoverLoad(t, a.url, b.url)
	old := h.Master()
	old.Kill()
	killed := time.Now()
	h.WaitFailover(old, 60*time.Second)
	t.Logf("sign-in works again on both instances %v after the kill", signInAgain(t, killed, a, b).Round(time.Millisecond))
	time.Sleep(500 * time.Millisecond) // some load on the new master too
	load.finish(t)
}

// TestFailoverThroughInstancesSentinelPause: the Sentinel master stopped
// (SIGSTOP) for 10 s, then let run again (SIGCONT), under the load
// tool's failover scenario, which goes on until the old master is back.
func TestFailoverThroughInstancesSentinelPause(t *testing.T) {
	h := redistest.StartSentinel(t, redistest.Options{}, 2, 3)
	a, b := haInstances(t, sentinelKeys(h))
	load := startFailoverLoad(t, a.url, b.url)
	old := h.Master()
	old.Pause()
	paused := time.Now()
	resumed := false
	defer func() {
		if !resumed {
			old.Resume()
		}
	}()
	h.WaitFailover(old, 60*time.Second)
	t.Logf("sign-in works again on both instances %v after the stop", signInAgain(t, paused, a, b).Round(time.Millisecond))
	time.Sleep(time.Until(paused.Add(10 * time.Second)))
	old.Resume()
	resumed = true
	// The old master comes back as it was at the stop until the
	// Sentinels make it a replica; the load goes on through that.
	time.Sleep(3 * time.Second)
	load.finish(t)
}

// TestFailoverThroughInstancesClusterKill: a 3-master, 3-replica
// cluster, the master of alice's session killed (SIGKILL) under the load
// tool's failover scenario. Its replica takes over; with no replica left
// to confirm writes in those slots, they get 503 until the old node,
// restarted, rejoins as its replica.
func TestFailoverThroughInstancesClusterKill(t *testing.T) {
	cl := redistest.StartCluster(t, redistest.Options{}, 3, 1)
	a, b := haInstances(t, "cluster_addresses = "+strings.Join(cl.Addrs(), ", "))
	load := startFailoverLoad(t, a.url, b.url)
	// The load tool's valid session is the only session key (the other
	// was signed out): its master is the one to kill.
	var key string
	var victim *redistest.Server
	for _, n := range cl.Nodes {
		if ks := n.Keys("failover:s:*"); len(ks) > 0 && cl.MasterOf(ks[0]) == n {
			key, victim = ks[0], n
		}
	}
	if victim == nil {
		t.Fatal("no master holds the load tool's session")
	}
	victim.Kill()
	killed := time.Now()
	cl.WaitFailover(victim, key, 60*time.Second)
	t.Logf("replica promoted %v after the kill", time.Since(killed).Round(time.Millisecond))
	victim.Start()
	t.Logf("sign-in works again on both instances %v after the kill, the old node restarted as a replica", signInAgain(t, killed, a, b).Round(time.Millisecond))
	time.Sleep(500 * time.Millisecond)
	load.finish(t)
}

// TestWaitOnlySignedInWrites: through an instance on Sentinel, a sign-in
// and a sign-out each make the master run a WAIT (a replica confirms
// them), 200 signed-in requests none.
func TestWaitOnlySignedInWrites(t *testing.T) {
	h := redistest.StartSentinel(t, redistest.Options{}, 1, 1)
	// Room for a busy machine: each write here must be confirmed.
	a, _ := haInstances(t, sentinelKeys(h)+"\nreplica_timeout = 10s\ncommand_timeout = 15s")
	master := h.Master()
	before := master.Calls("wait")
	sid, code := signIn(t, a.url, "alice", "pw-alice")
	if sid == "" {
		t.Fatalf("sign-in: %d", code)
	}
	signedIn := master.Calls("wait")
	for range 200 {
		if code, _, _ := send(t, "GET", a.url+"/api/backups", sid, nil, "application/json"); code != http.StatusOK {
			t.Fatalf("a signed-in request: %d", code)
		}
	}
	read := master.Calls("wait")
	signOut(t, a.url, sid)
	out := master.Calls("wait")
	t.Logf("WAITs: sign-in %d, 200 signed-in requests %d, sign-out (with its catalog page) %d", signedIn-before, read-signedIn, out-read)
	if signedIn-before < 1 || read != signedIn || out-read < 1 {
		t.Error("want a WAIT for the sign-in and for the sign-out, none for the signed-in requests")
	}
}
