package main

import (
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/testkit/redistest"
)

// TestDocsHighAvailabilityExamples runs the Sentinel and the Cluster
// examples of docs/instances.md as pasted, with the test's own addresses
// and folders, against real Sentinels (a master, two replicas, three
// Sentinels) and a real 3-master, 3-replica cluster, both with a
// password: alice signs in and her session is admitted.
func TestDocsHighAvailabilityExamples(t *testing.T) {
	var sentinel, cluster string
	for _, s := range iniSnippets(t) {
		if s.file != filepath.Join("docs", "instances.md") {
			continue
		}
		switch {
		case strings.Contains(s.text, "\nsentinel_addresses ="):
			sentinel = s.text
		case strings.Contains(s.text, "\ncluster_addresses ="):
			cluster = s.text
		}
	}
	if sentinel == "" || cluster == "" {
		t.Fatal("docs/instances.md has no Sentinel or no Cluster example")
	}
	for _, tc := range []struct {
		name, text string
		start      func(t *testing.T) (key string, addrs []string)
	}{
		{"sentinel", sentinel, func(t *testing.T) (string, []string) {
			return "sentinel_addresses", redistest.StartSentinel(t, redistest.Options{Password: redisPassword}, 2, 3).Addrs()
		}},
		{"cluster", cluster, func(t *testing.T) (string, []string) {
			return "cluster_addresses", redistest.StartCluster(t, redistest.Options{Password: redisPassword}, 3, 1).Addrs()
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key, addrs := tc.start(t)
			dir := t.TempDir()
			users := addUsers(t, dir, "alice")
			conf := regexp.MustCompile(`(?m)^`+key+` = .*$`).ReplaceAllString(tc.text, key+" = "+strings.Join(addrs, ", "))
			conf = regexp.MustCompile(`(?m)^listen = .*$`).ReplaceAllString(conf, "listen = 127.0.0.1:0\nstate_dir = "+filepath.Join(dir, "state")+"\naccess_log = false")
			conf = regexp.MustCompile(`(?m)^dir = .*$`).ReplaceAllString(conf, "dir = "+dir)
			conf = regexp.MustCompile(`(?m)^users_file = .*$`).ReplaceAllString(conf, "users_file = "+users)
			if err := os.MkdirAll(filepath.Join(dir, "state"), 0o700); err != nil {
				t.Fatal(err)
			}
			in := startInstance(t, conf)
			// A sign-in is answered once a replica has it; on a busy
			// machine one may miss replica_timeout (100 ms): 503, and
			// the client tries again.
			var sid string
			var code int
			for range 20 {
				if sid, code = signIn(t, in.url, "alice", "pw-alice"); code != http.StatusServiceUnavailable {
					break
				}
				time.Sleep(100 * time.Millisecond)
			}
			if sid == "" {
				t.Fatalf("sign-in with the %s example: %d\n%s\n%s", tc.name, code, conf, in.stderr)
			}
			if code, body, _ := send(t, "GET", in.url+"/api/me", sid, nil, ""); code != http.StatusOK || !strings.Contains(body, `"alice"`) {
				t.Fatalf("alice's session with the %s example: %d %s", tc.name, code, body)
			}
		})
	}
}
