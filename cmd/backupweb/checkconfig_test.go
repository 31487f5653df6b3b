package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckConfig(t *testing.T) {
	tests := []struct {
		name      string
		ini       string // "" means: no file, built-in defaults
		env       map[string]string
		code      int
		wantLines []string // each must appear on stderr
		notSay    []string
	}{
		{"built-in defaults", "", nil, exitOK, nil, nil},
		{"basic with hash in env", "[authentication]\ntype = basic\nusername = u\npassword = ${H}\nuse_bcrypt = true\n",
			map[string]string{"H": "$2b$12$qfeZmHvsxlDW8N2/YfnqZudyqkieQPQ4UbLzZH9l3wVK30hYkYJAm"}, exitOK, nil, nil},
		{"every problem listed", "[server]\nlisten = \ncolour = red\n[authentication]\ntype = basic\npassword = ${UNSET_PW}\nrealm = x\nbogus = 1\n",
			nil, exitError, []string{
				"error:", "UNSET_PW", "[server] listen", "warning:", "colour", "username: missing required key", "bogus: unknown key",
			}, nil},
		{"unknown type lists the valid ones", "[authentication]\ntype = ldap\n", nil, exitError,
			[]string{"error:", `unknown authentication type "ldap"`, "none, basic"}, nil},
		// Nothing listens on port 1: check-config validates [redis]
		// without connecting, so it passes at once.
		{"redis store checked without connecting", "[server]\nstore = redis\n[redis]\nurl = redis://backupweb@127.0.0.1:1/0\npassword = ${RP}\n[authentication]\ntype = basic\nusername = u\npassword = $2b$12$qfeZmHvsxlDW8N2/YfnqZudyqkieQPQ4UbLzZH9l3wVK30hYkYJAm\nuse_bcrypt = true\n",
			map[string]string{"RP": "redis-secret"}, exitOK, nil, []string{"redis-secret"}},
		{"redis password in the url", "[server]\nstore = redis\n[redis]\nurl = redis://u:redis-secret@127.0.0.1:6379/0\n", nil, exitError,
			[]string{"error:", "[redis] url: must not hold a password"}, []string{"redis-secret"}},
		{"catch-all skip_auth_routes refused", "[proxy]\nupstream = http://127.0.0.1:8384\nskip_auth_routes = GET=^/rest/noauth/health$,\n  ^.*\n", nil, exitError,
			[]string{"error:", ":3: [proxy] skip_auth_routes:", `"^.*": the path pattern matches every path`, "allow_anonymous = true"}, nil},
		{"unanchored skip_auth_routes refused", "[proxy]\nupstream = http://127.0.0.1:8384\nskip_auth_routes = /rest/noauth/health\n", nil, exitError,
			[]string{"error:", ":3: [proxy] skip_auth_routes:", "does not start with ^"}, nil},
		{"catch-all skip_auth_routes chosen", "[proxy]\nupstream = http://127.0.0.1:8384\nskip_auth_routes = ^/\nallow_anonymous = true\n", nil, exitOK, nil, nil},
		{"forward-auth instance warns of no catalog folder", "[server]\nmode = forward-auth\n", nil, exitOK, nil, []string{"backup"}},
		{"[ui] names the application", "[ui]\ntitle = Home NAS\nproduct_name = Syncthing\n", nil, exitOK, nil, []string{"[ui]"}},
		{"[ui] value checked", "[ui]\nproduct_name = " + strings.Repeat("S", 81) + "\ncolour = red\n", nil, exitError,
			[]string{"error:", "[ui] product_name: is longer than 80 characters", "warning:", "[ui] colour: unknown key"}, nil},
		{"idle_renewal checked", "[authentication]\ntype = flask-login\nusers_file = u\nidle_renewal = sometimes\n", map[string]string{"BACKUP_SECRET_KEY": strings.Repeat("ab", 32)}, exitError,
			[]string{"error:", `[authentication] idle_renewal: unknown value "sometimes"`}, nil},
		{"plain password warns but passes", "[authentication]\ntype = basic\nusername = u\npassword = hunter2\n", nil, exitOK,
			[]string{"warning:", "plain text"}, []string{"hunter2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			t.Chdir(dir)
			args := []string{"check-config"}
			if tt.ini != "" {
				path := filepath.Join(dir, "test.ini")
				os.WriteFile(path, []byte(tt.ini), 0o600)
				args = append(args, "-config", path)
			}
			c, out, stderr := testCLI(context.Background(), "", tt.env)
			code := c.main(args)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\nstderr:\n%s", code, tt.code, stderr.String())
			}
			for _, w := range tt.wantLines {
				if !strings.Contains(stderr.String(), w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr.String())
				}
			}
			for _, s := range tt.notSay {
				if strings.Contains(stderr.String()+out.String(), s) {
					t.Errorf("output echoes %q", s)
				}
			}
			for _, line := range strings.Split(strings.TrimSpace(stderr.String()), "\n") {
				if line != "" && !strings.HasPrefix(line, "error:") && !strings.HasPrefix(line, "warning:") && !strings.HasPrefix(line, "backupweb check-config:") {
					t.Errorf("stderr line does not start with error:/warning: %q", line)
				}
			}
			if code == exitOK && !strings.Contains(out.String(), "configuration ok") {
				t.Errorf("stdout %q", out.String())
			}
		})
	}
}

func TestCheckConfigMissingFile(t *testing.T) {
	c, _, stderr := testCLI(context.Background(), "", nil)
	if code := c.main([]string{"check-config", "-config", filepath.Join(t.TempDir(), "nope.ini")}); code != exitError {
		t.Fatalf("exit %d", code)
	}
	if !strings.Contains(stderr.String(), "nope.ini") {
		t.Fatalf("stderr does not name the file: %s", stderr.String())
	}
}
