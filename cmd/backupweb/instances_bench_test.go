package main

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/backupweb/backupweb/internal/testkit/benchtest"
	"github.com/backupweb/backupweb/internal/testkit/redistest"
)

// The instance benchmarks run the whole program (`serve`, as configured
// by a file) and send it real requests over loopback: GET /api/me with a
// valid session, with sessions in state_dir (store = file) or in Redis
// (store = redis, a real redis-server), against the same route with type
// none. Compare them in one run:
//
//	go test ./cmd/backupweb -run '^$' -bench Instance -benchtime 2s

// benchInstance starts serve with the [authentication] section auth and
// the [server]/[redis] lines server, and returns its URL and a session
// cookie for alice (none for type none).
func benchInstance(b *testing.B, server, authSection string) (base string, cookie *http.Cookie) {
	dir := b.TempDir()
	users := filepath.Join(dir, "users.txt")
	if code, _, errs := runUserCmd("pw-alice\n", "add", "-file", users, "-cost", "4", "alice"); code != 0 {
		b.Fatal(errs)
	}
	os.Mkdir(filepath.Join(dir, "backups"), 0o700)
	in := startInstance(b, fmt.Sprintf("[server]\nlisten = 127.0.0.1:0\naccess_log = false\nstate_dir = %s\n%s\n[backups]\ndir = %s\n%s",
		filepath.Join(dir, "state"), server, filepath.Join(dir, "backups"), fmt.Sprintf(authSection, users)))
	if authSection == "" {
		return in.url, nil
	}
	sid, code := signIn(b, in.url, "alice", "pw-alice")
	if sid == "" {
		b.Fatalf("login: %d", code)
	}
	return in.url, &http.Cookie{Name: instanceCookie, Value: sid}
}

const benchFlaskLogin = "[authentication]\ntype = flask-login\nuse_bcrypt = true\nusers_file = %s\n"

func runInstanceBench(b *testing.B, base string, cookie *http.Cookie) {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
	benchtest.URL(b, client, base, "/api/me", func(r *http.Request) {
		if cookie != nil {
			r.AddCookie(cookie)
		}
	})
}

func BenchmarkInstanceNone(b *testing.B) {
	base, _ := benchInstance(b, "", "")
	runInstanceBench(b, base, nil)
}

func BenchmarkInstanceFileStore(b *testing.B) {
	base, cookie := benchInstance(b, "store = file", benchFlaskLogin)
	runInstanceBench(b, base, cookie)
}

func BenchmarkInstanceRedisStore(b *testing.B) {
	srv := redistest.Start(b, redistest.Options{Password: redisPassword})
	base, cookie := benchInstance(b, "store = redis\n[redis]\nurl = "+srv.URL()+"\npassword = ${REDIS_PASSWORD}", benchFlaskLogin)
	runInstanceBench(b, base, cookie)
}

// BenchmarkInstanceRedisSentinel is BenchmarkInstanceRedisStore with the
// master found through Redis Sentinel (a master, two replicas, three
// Sentinels): a session check waits for no replica, so the two should
// not differ.
func BenchmarkInstanceRedisSentinel(b *testing.B) {
	h := redistest.StartSentinel(b, redistest.Options{Password: redisPassword}, 2, 3)
	base, cookie := benchInstance(b, "store = redis\n[redis]\nsentinel_addresses = "+strings.Join(h.Addrs(), ", ")+
		"\nsentinel_master = "+redistest.MasterName+"\npassword = ${REDIS_PASSWORD}", benchFlaskLogin)
	runInstanceBench(b, base, cookie)
}
