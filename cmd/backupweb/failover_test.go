package main

import (
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/testkit/redistest"
)

// failoverCounts are the answers seen during a failover.
type failoverCounts struct {
	ok, unavailable, noRetryAfter, signedOut, other, admitted atomic.Int64
}

// TestFailoverThroughInstances: two instances on Redis Sentinel (one
// master, two replicas, three Sentinels); alice's session in use at 32
// connections through both, as the load tool's right-credential session
// scenario does, while the master is killed (SIGKILL) and the Sentinels
// fail over. Every answer to her is 200 or 503 with Retry-After, never a
// sign-out; a session signed out before the kill and a request without
// one are never admitted. Then a sign-in works again on both.
func TestFailoverThroughInstances(t *testing.T) {
	h := redistest.StartSentinel(t, redistest.Options{}, 2, 3)
	dir := t.TempDir()
	users := addUsers(t, dir, "alice", "bob")
	conf := fmt.Sprintf(`[server]
listen = 127.0.0.1:0
store = redis
state_dir = %s
access_log = false
[redis]
url = redis://127.0.0.1/0
sentinel_addresses = %s
sentinel_master = %s
replica_timeout = 500ms
prefix = failover:
[backups]
dir = %s
[authentication]
type = flask-login
use_bcrypt = true
users_file = %s
`, filepath.Join(dir, "state"), strings.Join(h.Addrs(), ", "), redistest.MasterName, dir, users)
	a, b := startInstance(t, conf), startInstance(t, conf)
	sid, code := signIn(t, a.url, "alice", "pw-alice")
	if sid == "" {
		t.Fatalf("alice's sign-in: %d", code)
	}
	revoked, code := signIn(t, b.url, "bob", "pw-bob")
	if revoked == "" {
		t.Fatalf("bob's sign-in: %d", code)
	}
	signOut(t, a.url, revoked)

	old := h.Master()
	old.Kill()
	killed := time.Now()
	var n failoverCounts
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i := range 32 {
		base := []string{a.url, b.url}[i%2]
		c := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}, Timeout: 10 * time.Second,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer c.CloseIdleConnections()
			for j := 0; ; j++ {
				select {
				case <-stop:
					return
				default:
				}
				cookie := sid
				switch j % 4 {
				case 1:
					cookie = revoked
				case 3:
					cookie = ""
				}
				req, _ := http.NewRequest("GET", base+"/api/backups", nil)
				req.Header.Set("Accept", "application/json")
				if cookie != "" {
					req.AddCookie(&http.Cookie{Name: instanceCookie, Value: cookie})
				}
				resp, err := c.Do(req)
				if err != nil {
					n.other.Add(1)
					continue
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				clears := strings.Contains(strings.Join(resp.Header.Values("Set-Cookie"), "\n"), instanceCookie+"=;")
				switch {
				case cookie != sid && resp.StatusCode < 300:
					n.admitted.Add(1)
				case cookie != sid:
				case resp.StatusCode == http.StatusOK && !clears:
					n.ok.Add(1)
				case resp.StatusCode == http.StatusServiceUnavailable && !clears:
					n.unavailable.Add(1)
					if resp.Header.Get("Retry-After") == "" {
						n.noRetryAfter.Add(1)
					}
				case resp.StatusCode == http.StatusUnauthorized || clears:
					n.signedOut.Add(1)
				default:
					n.other.Add(1)
				}
			}
		}()
	}
	h.WaitFailover(old, 30*time.Second)
	// Service again: a sign-in (a write a replica must confirm) on both.
	for _, in := range []*instance{a, b} {
		deadline := time.Now().Add(30 * time.Second)
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
	t.Logf("sign-in works again on both instances %v after the kill", time.Since(killed).Round(time.Millisecond))
	time.Sleep(500 * time.Millisecond)
	close(stop)
	wg.Wait()
	t.Logf("alice's session at 32 connections through two instances during the failover: %d answered 200, %d answered 503 (%d without Retry-After), %d signed out, %d other; %d requests admitted without a valid session",
		n.ok.Load(), n.unavailable.Load(), n.noRetryAfter.Load(), n.signedOut.Load(), n.other.Load(), n.admitted.Load())
	if n.noRetryAfter.Load()+n.signedOut.Load()+n.other.Load()+n.admitted.Load() != 0 {
		t.Fatal("during the failover an answer was neither 200 nor 503 with Retry-After, or a request was admitted without a valid session")
	}
	for _, in := range []*instance{a, b} {
		if code, _, _ := send(t, "GET", in.url+"/api/backups", sid, nil, "application/json"); code != http.StatusOK {
			t.Errorf("after the failover, alice's session on %s: %d", in.url, code)
		}
		if code, _, _ := send(t, "GET", in.url+"/api/backups", revoked, nil, "application/json"); code == http.StatusOK {
			t.Errorf("after the failover, bob's session, signed out before it, is admitted on %s", in.url)
		}
	}
}
