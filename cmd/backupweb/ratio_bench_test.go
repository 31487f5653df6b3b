package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/backupweb/backupweb/internal/testkit"
	"github.com/backupweb/backupweb/internal/testkit/benchtest"
)

// BenchmarkRatio is the ratio table of the Performance section, reproducible
// with go test: each target is the whole program (`serve`, defaults, the
// access log on) loaded by benchtest.Connections parallel clients over
// loopback, beside a plain net/http server serving the same small JSON list
// unprotected ("plain"). Divide plain's ns/op by a target's for its ratio:
//
//	go test ./cmd/backupweb -run '^$' -bench Ratio -cpu 2 -benchtime 3s
//
// none, basic, session and forward compare with plain; proxy-session with
// proxy-none; proxy-none with plain (the upstream reached directly). The
// ratio tool (wrk, separate processes) measures the same rows.
func BenchmarkRatio(b *testing.B) {
	plain := httptest.NewServer(http.HandlerFunc(plainBackups))
	defer plain.Close()

	dir := b.TempDir()
	backups := filepath.Join(dir, "backups")
	os.Mkdir(backups, 0o700)
	for n := 1; n <= 3; n++ {
		os.WriteFile(filepath.Join(backups, fmt.Sprintf("backup-2024-03-0%d.tar.gz", n)), make([]byte, 1000), 0o600)
	}
	const password = "bench pass correct"
	hash := []byte(testkit.Hash(b, password))
	users := filepath.Join(dir, "users")
	os.WriteFile(users, fmt.Appendf(nil, "alice:%s\n", hash), 0o600)

	start := func(name, sections string) string {
		return startInstance(b, fmt.Sprintf("[server]\nlisten = 127.0.0.1:0\nstate_dir = %s\n[backups]\ndir = %s\n%s",
			filepath.Join(dir, "state-"+name), backups, sections)).url
	}
	login := fmt.Sprintf("[authentication]\ntype = flask-login\nuse_bcrypt = true\nusers_file = %s\n", users)
	upstream := "[proxy]\nupstream = " + plain.URL + "\n"
	session := func(base string) func(*http.Request) {
		sid, code := signIn(b, base, "alice", password)
		if sid == "" {
			b.Fatalf("login: %d", code)
		}
		c := &http.Cookie{Name: instanceCookie, Value: sid}
		return func(r *http.Request) { r.AddCookie(c) }
	}

	type target struct {
		name, base, path string
		mod              func(*http.Request)
	}
	var targets []target
	add := func(name, base, path string, mod func(*http.Request)) {
		targets = append(targets, target{name, base, path, mod})
	}
	add("plain", plain.URL, "/api/backups", nil)
	add("none", start("none", ""), "/api/backups", nil)
	add("basic", start("basic", fmt.Sprintf("[authentication]\ntype = basic\nusername = api\npassword = %s\nuse_bcrypt = true\n", hash)),
		"/api/backups", func(r *http.Request) { r.SetBasicAuth("api", password) })
	base := start("session", login)
	add("session", base, "/api/backups", session(base))
	base = start("forward", login)
	add("forward", base, "/auth/request", session(base))
	add("proxy-direct", plain.URL, "/protected/api/backups", nil)
	add("proxy-none", start("proxy-none", upstream), "/protected/api/backups", nil)
	base = start("proxy-session", login+upstream)
	add("proxy-session", base, "/protected/api/backups", session(base))

	for _, t := range targets {
		b.Run(t.name, func(b *testing.B) {
			benchtest.URL(b, &http.Client{}, t.base, t.path, t.mod)
		})
	}
}

// plainListing is what the plain server answers: the ratio tool's
// reference (shared/bench/goref), three backups.
var plainListing = map[string][]map[string]any{"backups": {
	{"name": "backup-2024-03-03.tar.gz", "size": 123456789, "modified": "2024-03-03T02:00:00Z"},
	{"name": "backup-2024-03-02.tar.gz", "size": 123400000, "modified": "2024-03-02T02:00:00Z"},
	{"name": "backup-2024-03-01.tar.gz", "size": 123300000, "modified": "2024-03-01T02:00:00Z"},
}}

// plainBackups is a plain net/http handler, as a Go programmer writes it:
// encode the list on every request, no authentication, no log.
func plainBackups(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(plainListing)
}
