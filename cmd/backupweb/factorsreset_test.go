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

// TestUserDelAndPasswdWithConfig: `user del -config F` removes the user's
// line from F's users_file, their tokens and second factors from the
// store F names and ends their sessions on every instance;
// `user passwd -config F` needs no -file (F's users_file); a -file that is
// not F's users_file is refused, changing nothing.
func TestUserDelAndPasswdWithConfig(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{Password: redisPassword})
	dir := t.TempDir()
	users := addUsers(t, dir, "alice", "bob")
	conf := redisConfig(srv, dir, users, "prefix = del:", "second_factor = optional")
	path := filepath.Join(dir, "backupweb.ini")
	must(t, os.WriteFile(path, []byte(conf), 0o600))
	a, b := startInstance(t, conf), startInstance(t, conf)
	for _, name := range []string{"alice", "bob"} {
		if code, _, errs := stateCmd(t, "user", "recovery-codes", "-config", path, name); code != exitOK {
			t.Fatalf("recovery-codes %s: %s", name, errs)
		}
		tokenCmdAt(t, conf, "add", name)
	}
	aliceTok := strings.TrimSpace(tokenCmdAt(t, conf, "add", "alice"))
	sid, _ := signIn(t, a.url, "alice", "pw-alice")
	if code, _, _ := send(t, "GET", b.url+"/api/me", sid, nil, ""); code != http.StatusOK {
		t.Fatalf("alice's session before: %d", code)
	}

	other := addUsers(t, t.TempDir(), "alice")
	if code, _, errs := stateCmd(t, "user", "del", "-config", path, "-file", other, "alice"); code != exitError || !strings.Contains(errs, "is not the users_file of") {
		t.Fatalf("del with another -file: %d %s", code, errs)
	}
	code, _, errs := stateCmd(t, "user", "del", "-config", path, "alice")
	if code != exitOK || !strings.Contains(errs, `ended 2 tokens of user "alice" in redis`) || !strings.Contains(errs, `removed every second factor of user "alice" from redis`) ||
		!strings.Contains(errs, `removed user "alice" from `+users) || !strings.Contains(errs, `session(s) of user "alice"`) {
		t.Fatalf("user del -config: %d\n%s", code, errs)
	}
	text, err := os.ReadFile(users)
	must(t, err)
	if strings.Contains(string(text), "alice:") || !strings.Contains(string(text), "bob:") {
		t.Fatalf("the user file after del:\n%s", text)
	}
	// The instances' user file still names alice until they read it
	// again; her session and token end everywhere at once all the same.
	for _, in := range []*instance{a, b} {
		if code, _, _ := send(t, "GET", in.url+"/api/me", sid, nil, ""); code != http.StatusUnauthorized {
			t.Errorf("%s: alice's session after del: %d", in.url, code)
		}
		if code := bearer(t, "GET", in.url+"/api/backups", aliceTok, nil).StatusCode; code != http.StatusUnauthorized {
			t.Errorf("%s: alice's token after del: %d", in.url, code)
		}
	}
	if out := tokenCmdAt(t, conf, "list"); strings.Contains(out, "alice") || !strings.Contains(out, "bob") {
		t.Errorf("token list after del:\n%s", out)
	}
	if code, out, _ := stateCmd(t, "user", "factors", "-config", path, "bob"); code != exitOK || !strings.Contains(out, "recovery codes left: 10") {
		t.Errorf("bob's factors after alice's removal: %q", out)
	}
	before, err := os.ReadFile(users)
	must(t, err)
	c, _, errs2 := testCLI(t.Context(), "new-pw-bob\nnew-pw-bob\n", map[string]string{"BACKUP_SECRET_KEY": instancesKey, "REDIS_PASSWORD": redisPassword})
	if code := c.main([]string{"user", "passwd", "-config", path, "-cost", "4", "-keep-tokens", "bob"}); code != exitOK || !strings.Contains(errs2.String(), `changed the password of user "bob" in `+users) {
		t.Fatalf("passwd -config without -file: %d\n%s", code, errs2)
	}
	after, err := os.ReadFile(users)
	must(t, err)
	if string(after) == string(before) || !strings.HasPrefix(string(after), "bob:$2") {
		t.Fatalf("the user file after passwd -config:\n%s", after)
	}
}
