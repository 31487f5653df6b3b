package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/backupweb/backupweb/internal/testkit"
)

// TestReloadRotatesBasicCredentials: SIGHUP applies [authentication]
// username, password and use_bcrypt of type basic to the running
// process: the old credential is refused at once, even though the
// verification cache vouched for it a moment before, the new one is
// admitted, and no key is reported as needing a restart.
func TestReloadRotatesBasicCredentials(t *testing.T) {
	oldHash := testkit.HashCost(t, "old secret", 10)
	newHash := testkit.HashCost(t, "new secret", 10)
	base := map[string]string{
		"authentication.username": "ops", "authentication.password": oldHash, "authentication.use_bcrypt": "true",
	}
	tests := []struct {
		name             string
		change           map[string]string
		oldUser, oldPass string
		newUser, newPass string
	}{
		{"password", map[string]string{"authentication.password": newHash}, "ops", "old secret", "ops", "new secret"},
		{"username", map[string]string{"authentication.username": "root"}, "ops", "old secret", "root", "old secret"},
		{"use_bcrypt", map[string]string{"authentication.use_bcrypt": "false", "authentication.password": "a plain new secret"},
			"ops", "old secret", "ops", "a plain new secret"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				fmt.Fprintf(w, "upstream user=%q\n", r.Header.Get("X-Forwarded-User"))
			}))
			t.Cleanup(up.Close)
			dir := t.TempDir()
			os.Mkdir(filepath.Join(dir, "backups"), 0o700)
			r := &reloadRig{t: t, dir: dir, keys: map[string]string{
				"server.listen": "127.0.0.1:0", "server.state_dir": filepath.Join(dir, "state"),
				"proxy.upstream": up.URL, "authentication.type": "basic",
			}}
			for k, v := range base {
				r.keys[k] = v
			}
			r.s = startServe(t, nil, "-config", r.write())
			r.base = "http://" + r.s.addr
			status := func(user, pass string) int {
				req, _ := http.NewRequest("GET", r.base+"/x", nil)
				req.SetBasicAuth(user, pass)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				return resp.StatusCode
			}
			if got := status("ops", "old secret"); got != http.StatusOK {
				t.Fatalf("the first credential before the reload: %d", got)
			}
			for k, v := range tt.change {
				r.keys[k] = v
			}
			r.write()
			r.hup()
			if got := status(tt.oldUser, tt.oldPass); got != http.StatusUnauthorized {
				t.Errorf("the old credential after the reload: %d, want 401", got)
			}
			if got := status(tt.newUser, tt.newPass); got != http.StatusOK {
				t.Errorf("the new credential after the reload: %d, want 200", got)
			}
			log := r.s.log.String()
			if strings.Contains(log, "restart to apply") || !strings.Contains(log, "auth: credentials changed on reload") {
				t.Errorf("the rotation is not applied as a live change:\n%s", log)
			}
		})
	}
}

// TestTwoCredentialsRefused: the program with type basic answers 400 to
// two Authorization headers and to one holding two credentials, the
// right password among them, and logs an auth refused line; the right
// password alone is admitted.
func TestTwoCredentialsRefused(t *testing.T) {
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, "backups"), 0o700)
	r := &reloadRig{t: t, dir: dir, keys: map[string]string{
		"server.listen": "127.0.0.1:0", "server.state_dir": filepath.Join(dir, "state"),
		"backups.dir": filepath.Join(dir, "backups"), "authentication.type": "basic",
		"authentication.username": "ops", "authentication.password": "a plain secret",
	}}
	r.s = startServe(t, nil, "-config", r.write())
	right := "Basic b3BzOmEgcGxhaW4gc2VjcmV0" // ops:a plain secret
	tests := []struct {
		name   string
		values []string
		want   int
	}{
		{"one", []string{right}, http.StatusOK},
		{"two headers", []string{right, "Basic bm9ib2R5Ong="}, http.StatusBadRequest},
		{"two in one", []string{right + ", Bearer tok"}, http.StatusBadRequest},
	}
	for _, tt := range tests {
		req, _ := http.NewRequest("GET", "http://"+r.s.addr+"/api/me", nil)
		for _, v := range tt.values {
			req.Header.Add("Authorization", v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tt.want {
			t.Errorf("%s: %d, want %d", tt.name, resp.StatusCode, tt.want)
		}
	}
	if n := strings.Count(r.s.log.String(), `reason="more than one credential"`); n != 2 {
		t.Errorf("%d auth refused lines for two credentials, want 2:\n%s", n, r.s.log)
	}
}
