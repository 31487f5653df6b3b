package main

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/backupweb/backupweb/internal/testkit/redistest"
)

// TestFactorsResetEndsEverySession: `user factors -reset -config F` ends
// every session of the user where F keeps sessions, those made with the
// password alone (which no factor check would end) included: on every
// instance at their next request with Redis, by the running service with
// state_dir. Another user's session stands.
func TestFactorsResetEndsEverySession(t *testing.T) {
	fileConfig := func(dir, users string) string {
		return fmt.Sprintf("[server]\nlisten = 127.0.0.1:0\nstore = file\nstate_dir = %s\naccess_log = false\n[backups]\ndir = %s\n"+
			"[authentication]\ntype = flask-login\nuse_bcrypt = true\nusers_file = %s\nsecond_factor = optional\n", filepath.Join(dir, "state"), dir, users)
	}
	tests := []struct {
		name      string
		instances int
		config    func(t *testing.T, dir, users string) string
		says      string
	}{
		{"redis", 2, func(t *testing.T, dir, users string) string {
			srv := redistest.Start(t, redistest.Options{Password: redisPassword})
			return redisConfig(srv, dir, users, "prefix = reset:", "second_factor = optional")
		}, `ended 1 session(s) of user "alice"`},
		{"file", 1, func(_ *testing.T, dir, users string) string {
			return fileConfig(dir, users)
		}, `ended the sessions of user "alice": the running service took the request`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			users := addUsers(t, dir, "alice", "bob")
			conf := tt.config(t, dir, users)
			path := filepath.Join(dir, "backupweb.ini")
			must(t, os.WriteFile(path, []byte(conf), 0o600))
			var ins []*instance
			for range tt.instances {
				ins = append(ins, startInstance(t, conf))
			}
			alice, _ := signIn(t, ins[0].url, "alice", "pw-alice")
			bob, _ := signIn(t, ins[0].url, "bob", "pw-bob")
			for _, in := range ins {
				for _, sid := range []string{alice, bob} {
					if code, _, _ := send(t, "GET", in.url+"/api/me", sid, nil, ""); code != http.StatusOK {
						t.Fatalf("%s before the reset: %d", in.url, code)
					}
				}
			}
			code, _, errs := stateCmd(t, "user", "factors", "-reset", "-config", path, "alice")
			if code != exitOK || !strings.Contains(errs, `user "alice" had no factors`) || !strings.Contains(errs, tt.says) {
				t.Fatalf("factors -reset -config: exit %d\n%s", code, errs)
			}
			for _, in := range ins {
				if code, _, _ := send(t, "GET", in.url+"/api/me", alice, nil, ""); code != http.StatusUnauthorized {
					t.Errorf("%s: alice's password-only session after the reset: %d, want 401", in.url, code)
				}
				if code, _, _ := send(t, "GET", in.url+"/api/me", bob, nil, ""); code != http.StatusOK {
					t.Errorf("%s: bob's session after alice's reset: %d", in.url, code)
				}
			}
			if again, _ := signIn(t, ins[len(ins)-1].url, "alice", "pw-alice"); again == "" {
				t.Error("alice cannot sign in again after the reset")
			}
		})
	}
}
