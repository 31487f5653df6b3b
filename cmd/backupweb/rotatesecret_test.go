package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/app"
	"github.com/backupweb/backupweb/internal/factors"
	"github.com/backupweb/backupweb/internal/testkit"
	"github.com/backupweb/backupweb/internal/testkit/redistest"
)

// The keys of a rotation: the one in force (the factors commands' test
// key, so that `user totp` enrols under it), the new one, and one neither
// holds.
const (
	rotOldKey   = testFactorSecret
	rotNewKey   = "fedcba9876543210fedcba9876543210fedcba9876543210"
	rotOtherKey = "a key that no instance of this test ever holds!!"
)

// rotationDoc reads docs/operations.md "Rotating the secret key": the
// environment of step 2, with NEW_KEY and OLD_KEY given, and the command
// of step 4 as words, its configuration path replaced by config.
func rotationDoc(t *testing.T, newKey, oldKey, config string) (env map[string]string, rotate []string) {
	t.Helper()
	const section = "## Rotating the secret key"
	env = map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(docSnippet(t, "docs/operations.md", section, "sh")), "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), "=")
		if !ok {
			t.Fatalf("step 2's environment has a line that is not NAME=VALUE: %q", line)
		}
		env[k] = strings.NewReplacer("NEW_KEY", newKey, "OLD_KEY", oldKey).Replace(v)
	}
	if env["BACKUP_SECRET_KEY"] != newKey || env["BACKUP_SECRET_KEY_PREVIOUS"] != oldKey || len(env) != 2 {
		t.Fatalf("step 2 no longer gives the new key as BACKUP_SECRET_KEY and the old one as BACKUP_SECRET_KEY_PREVIOUS: %v", env)
	}
	for _, line := range strings.Split(docSnippet(t, "docs/operations.md", "4. Once every instance runs with both keys", "sh"), "\n") {
		if line = strings.TrimSpace(line); strings.HasPrefix(line, "backupweb rotate-secret") {
			rotate = strings.Fields(strings.Replace(line, "/etc/backupweb/backupweb.ini", config, 1))[1:]
		}
	}
	if len(rotate) != 3 || rotate[2] != config {
		t.Fatalf("step 4 no longer runs backupweb rotate-secret -config with the service's configuration: %q", rotate)
	}
	return env, rotate
}

// totpCodes hands out codes of one TOTP secret, each of a time step not
// used before: a step is accepted once per user, and the service accepts
// the one either side of the current.
type totpCodes struct {
	secret string
	used   map[int64]bool
}

func (k *totpCodes) next(t *testing.T) string {
	t.Helper()
	now := time.Now()
	for _, d := range []time.Duration{-30 * time.Second, 0, 30 * time.Second} {
		at := now.Add(d)
		if step := at.Unix() / 30; !k.used[step] {
			k.used[step] = true
			code, err := factors.TOTPCode(k.secret, at)
			if err != nil {
				t.Fatal(err)
			}
			return code
		}
	}
	t.Fatal("every TOTP step of the last minute is spent")
	return ""
}

// signInWithCode signs c in at base with a password and then code at the
// second-factor step, and returns the step's status (303: signed in).
func signInWithCode(t *testing.T, c *http.Client, base, user, password, code string) int {
	t.Helper()
	resp := testkit.Post(t, c, testkit.Login{Page: base + "/login", User: user, Password: password, Next: "/"})
	loc := resp.Header.Get("Location")
	if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, "/_backupweb/second-factor") {
		return resp.StatusCode
	}
	form := url.Values{"code": {code}, "next": {"/"}, "csrf_token": {testkit.Token(t, c, base+loc)}}
	resp, err := c.PostForm(base+"/_backupweb/second-factor", form)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// me returns the status of GET /api/me at base with c's cookies.
func me(t *testing.T, c *http.Client, base string) (int, string) {
	t.Helper()
	resp, err := c.Get(base + "/api/me")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// rotationSetup makes alice (TOTP, recovery codes and a machine token,
// all under the old key) and bob (a TOTP secret sealed under a key no
// instance holds) in dir, and returns the user file, alice's TOTP codes,
// her recovery codes and her token.
func rotationSetup(t *testing.T, dir string) (users string, codes *totpCodes, recovery []string, token string) {
	t.Helper()
	users = addUsers(t, dir, "alice", "bob")
	code, out, stderr := enrolPipe(t, users, "alice")
	if code != exitOK {
		t.Fatalf("user totp: %d %s", code, stderr)
	}
	u, _ := url.Parse(strings.TrimSpace(out))
	codes = &totpCodes{secret: u.Query().Get("secret"), used: map[int64]bool{}}
	code, out, stderr = runFactorCmd(t, "", "recovery-codes", "-file", users, "alice")
	if recovery = strings.Fields(out); code != exitOK || len(recovery) != factors.RecoveryCount {
		t.Fatalf("user recovery-codes: %d %s", code, stderr)
	}
	other, err := factors.NewKeys([]byte(rotOtherKey))
	if err != nil {
		t.Fatal(err)
	}
	err = factors.Edit(factors.DefaultPath(users), nil, func(d *factors.Doc) error {
		return d.Put(&factors.Record{User: "bob", TOTP: &factors.TOTP{Sealed: other.SealTOTP("bob", "JBSWY3DPEHPK3PXP"), Added: time.Now().UTC()}})
	})
	if err != nil {
		t.Fatal(err)
	}
	if code, out, stderr = runTokenCmd("add", "-file", users, "alice"); code != exitOK {
		t.Fatalf("token add: %d %s", code, stderr)
	}
	return users, codes, recovery, strings.TrimSpace(out)
}

// runRotateDoc runs the documented rotate-secret command with env and
// returns what it printed.
func runRotateDoc(t *testing.T, env map[string]string, args []string) string {
	t.Helper()
	c, out, errs := testCLI(context.Background(), "", env)
	if code := c.main(args); code != exitOK {
		t.Fatalf("rotate-secret: exit %d\n%s%s", code, out, errs)
	}
	return out.String()
}

// wantLines fails t unless out holds every line of want.
func wantLines(t *testing.T, out string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(out, w+"\n") {
			t.Fatalf("rotate-secret printed:\n%s\nwant the line %q", out, w)
		}
	}
}

// afterRotation checks, on instances holding the new key alone, that
// nothing was lost: the signed-in client, the token, a fresh sign-in with
// TOTP and one with a recovery code; and that bob, whose TOTP secret is
// under neither key, is refused rather than let in on his password.
func afterRotation(t *testing.T, urls []string, c *http.Client, codes *totpCodes, recovery []string, token string) {
	t.Helper()
	for _, u := range urls {
		if code, body := me(t, c, u); code != http.StatusOK || !strings.Contains(body, `"alice"`) {
			t.Fatalf("signed out at %s after the rotation: %d %s", u, code, body)
		}
		if resp := bearer(t, "GET", u+"/api/me", token, nil); resp.StatusCode != http.StatusOK {
			t.Fatalf("the token made before the rotation at %s: %d", u, resp.StatusCode)
		}
	}
	fresh := testkit.Client()
	if code := signInWithCode(t, fresh, urls[0], "alice", "pw-alice", codes.next(t)); code != http.StatusSeeOther {
		t.Fatalf("TOTP sign-in after the rotation: %d", code)
	}
	if code, _ := me(t, fresh, urls[len(urls)-1]); code != http.StatusOK {
		t.Fatalf("the new sign-in: %d", code)
	}
	if code := signInWithCode(t, testkit.Client(), urls[0], "alice", "pw-alice", recovery[4]); code != http.StatusSeeOther {
		t.Fatalf("recovery code after the rotation: %d", code)
	}
	bob := testkit.Client()
	resp := testkit.Post(t, bob, testkit.Login{Page: urls[0] + "/login", User: "bob", Password: "pw-bob", Next: "/"})
	if resp.StatusCode == http.StatusSeeOther && !strings.HasPrefix(resp.Header.Get("Location"), "/_backupweb/second-factor") {
		t.Fatalf("bob, whose TOTP secret is under neither key, signed in on his password: %s", resp.Header.Get("Location"))
	}
	if code, _ := me(t, bob, urls[0]); code == http.StatusOK {
		t.Fatal("bob, whose TOTP secret is under neither key, is signed in")
	}
}

// TestRotateSecretRolling rotates the secret key of three instances
// sharing one Redis, as docs/operations.md says, while a client signed in
// with TOTP keeps using all of them: each instance is restarted in turn
// onto the new key with the old one as previous, rotate-secret reseals,
// and the instances are restarted again without the previous key. The
// client is never signed out, nobody enrols again, TOTP, recovery codes
// and the machine token made before still work, and a secret under
// neither key is refused.
func TestRotateSecretRolling(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{Password: redisPassword})
	dir := t.TempDir()
	users, codes, recovery, token := rotationSetup(t, dir)
	config := filepath.Join(dir, "backupweb.ini")
	must(t, os.WriteFile(config, []byte(redisConfig(srv, dir, users, "prefix = rot:", "second_factor = required\n")), 0o600))
	// The factors and the token were made in files: into Redis, as
	// docs/instances.md says for a move to store = redis. The import
	// refuses a record it cannot read, so bob's goes to Redis as it is,
	// after.
	var bobRec *factors.Record
	must(t, factors.Edit(factors.DefaultPath(users), nil, func(d *factors.Doc) error {
		var err error
		if bobRec, err = d.Get("bob"); err == nil {
			d.Delete("bob")
		}
		return err
	}))
	c0, _, errs0 := testCLI(t.Context(), "", map[string]string{"BACKUP_SECRET_KEY": rotOldKey, "REDIS_PASSWORD": redisPassword})
	if code := c0.main([]string{"state", "import", "-config", config}); code != exitOK {
		t.Fatalf("state import: %d %s", code, errs0)
	}
	us, err := app.OpenUserState(config, func(k string) (string, bool) {
		v, ok := map[string]string{"BACKUP_SECRET_KEY": rotOldKey, "REDIS_PASSWORD": redisPassword}[k]
		return v, ok
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	must(t, us.Store.EditFactors(t.Context(), "bob", func(rec *factors.Record) error { *rec = *bobRec; return nil }))
	us.Close()
	rolled, rotate := rotationDoc(t, rotNewKey, rotOldKey, config)
	rolled["REDIS_PASSWORD"] = redisPassword
	oldEnv := map[string]string{"BACKUP_SECRET_KEY": rotOldKey, "REDIS_PASSWORD": redisPassword}
	newEnv := map[string]string{"BACKUP_SECRET_KEY": rotNewKey, "REDIS_PASSWORD": redisPassword}

	ins := make([]*served, 3)
	for i := range ins {
		ins[i] = startServe(t, oldEnv, "-config", config)
	}
	urls := func() []string {
		var u []string
		for _, s := range ins {
			u = append(u, "http://"+s.addr)
		}
		return u
	}
	c := testkit.Client()
	if code := signInWithCode(t, c, urls()[0], "alice", "pw-alice", codes.next(t)); code != http.StatusSeeOther {
		t.Fatalf("TOTP sign-in before the rotation: %d", code)
	}
	everywhere := func(stage string) {
		t.Helper()
		for _, u := range urls() {
			if code, body := me(t, c, u); code != http.StatusOK || !strings.Contains(body, `"alice"`) {
				t.Fatalf("%s: %s answers %d %s", stage, u, code, body)
			}
			if resp := bearer(t, "GET", u+"/api/me", token, nil); resp.StatusCode != http.StatusOK {
				t.Fatalf("%s: the token at %s: %d", stage, u, resp.StatusCode)
			}
		}
	}
	everywhere("before the rotation")
	restartAll := func(env map[string]string, stage string) {
		for i := range ins {
			ins[i].stop()
			ins[i] = startServe(t, env, "-config", config)
			everywhere(fmt.Sprintf("%s, instance %d restarted", stage, i+1))
		}
	}
	restartAll(rolled, "step 3")

	out := runRotateDoc(t, rolled, rotate)
	wantLines(t, out,
		"TOTP secrets (redis): 1 resealed, 0 already under the current key, 0 under neither key",
		"recovery codes (redis): 10 resealed, 0 already under the current key, 0 under neither key",
		// bob's record, whose TOTP secret opens under neither key.
		"factors records (redis): 1 resealed, 0 already under the current key, 1 under neither key",
		"machine token records (redis): 1 resealed, 0 already under the current key, 0 under neither key",
		"sessions (redis): 1 resealed, 0 already under the current key, 0 under neither key")
	// Idempotent.
	wantLines(t, runRotateDoc(t, rolled, rotate),
		"TOTP secrets (redis): 0 resealed, 1 already under the current key, 0 under neither key",
		"recovery codes (redis): 0 resealed, 10 already under the current key, 0 under neither key",
		"factors records (redis): 0 resealed, 1 already under the current key, 1 under neither key",
		"machine token records (redis): 0 resealed, 1 already under the current key, 0 under neither key",
		"sessions (redis): 0 resealed, 1 already under the current key, 0 under neither key")
	everywhere("step 5") // the session moves to the new key's place

	restartAll(newEnv, "step 6")
	afterRotation(t, urls(), c, codes, recovery, token)
}

// TestRotateSecretFileStore is the rotation of one instance keeping its
// sessions in state_dir: it reseals them itself when it starts with both
// keys, rotate-secret reseals the factors file and counts the sessions,
// and after the previous key is dropped nothing is lost.
func TestRotateSecretFileStore(t *testing.T) {
	dir := t.TempDir()
	users, codes, recovery, token := rotationSetup(t, dir)
	must(t, os.MkdirAll(filepath.Join(dir, "backups"), 0o755))
	config := filepath.Join(dir, "backupweb.ini")
	ini := fmt.Sprintf("[server]\nlisten = 127.0.0.1:0\nstate_dir = %s\naccess_log = false\n[backups]\ndir = %s\n[authentication]\ntype = flask-login\nuse_bcrypt = true\nusers_file = %s\nsecond_factor = required\n",
		filepath.Join(dir, "state"), filepath.Join(dir, "backups"), users)
	must(t, os.WriteFile(config, []byte(ini), 0o600))
	rolled, rotate := rotationDoc(t, rotNewKey, rotOldKey, config)

	s := startServe(t, map[string]string{"BACKUP_SECRET_KEY": rotOldKey}, "-config", config)
	c := testkit.Client()
	if code := signInWithCode(t, c, "http://"+s.addr, "alice", "pw-alice", codes.next(t)); code != http.StatusSeeOther {
		t.Fatalf("TOTP sign-in before the rotation: %d", code)
	}
	s.stop()
	s = startServe(t, rolled, "-config", config)
	testkit.WaitUntil(t, 10*time.Second, func() bool { return strings.Contains(s.log.String(), "sessions kept in state_dir are resealed") },
		func() string { return "the service did not reseal its sessions at start:\n" + s.log.String() })
	if code, _ := me(t, c, "http://"+s.addr); code != http.StatusOK {
		t.Fatalf("signed out by the restart onto the new key: %d", code)
	}
	out := runRotateDoc(t, rolled, rotate)
	wantLines(t, out,
		"TOTP secrets: 1 resealed, 0 already under the current key, 0 under neither key",
		"recovery codes: 10 resealed, 0 already under the current key, 0 under neither key")
	if !strings.Contains(out, "sessions (file store") {
		t.Fatalf("rotate-secret does not count the file store's sessions:\n%s", out)
	}
	s.stop()
	s = startServe(t, map[string]string{"BACKUP_SECRET_KEY": rotNewKey}, "-config", config)
	afterRotation(t, []string{"http://" + s.addr}, c, codes, recovery, token)
}

// TestCheckConfigPreviousKey: check-config names a rotation in progress,
// refuses a previous key that is short or the current one, and
// rotate-secret refuses to run without the previous key.
func TestCheckConfigPreviousKey(t *testing.T) {
	dir := tokenSetup(t)
	config := filepath.Join(dir, "backupweb.ini")
	must(t, os.WriteFile(config, []byte(loginINI(dir, "")), 0o600))
	tests := []struct {
		name      string
		prev      string
		code      int
		out, errs string
	}{
		{"none", "", exitOK, "configuration ok", ""},
		{"rotation", rotOldKey, exitOK, "secret key rotation: BACKUP_SECRET_KEY_PREVIOUS is set", ""},
		{"short", "short", exitError, "", "BACKUP_SECRET_KEY_PREVIOUS is shorter than 32 characters"},
		{"same", rotNewKey, exitError, "", "BACKUP_SECRET_KEY_PREVIOUS is the same as BACKUP_SECRET_KEY"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := map[string]string{"BACKUP_SECRET_KEY": rotNewKey}
			if tt.prev != "" {
				env["BACKUP_SECRET_KEY_PREVIOUS"] = tt.prev
			}
			c, out, errs := testCLI(context.Background(), "", env)
			code := c.main([]string{"check-config", "-config", config})
			if code != tt.code || !strings.Contains(out.String(), tt.out) || !strings.Contains(errs.String(), tt.errs) {
				t.Fatalf("exit %d\nstdout %s\nstderr %s", code, out, errs)
			}
			if tt.prev == "" && strings.Contains(out.String(), "rotation") {
				t.Fatalf("a rotation is named without a previous key: %s", out)
			}
		})
	}
	c, _, errs := testCLI(context.Background(), "", map[string]string{"BACKUP_SECRET_KEY": rotNewKey})
	if code := c.main([]string{"rotate-secret", "-config", config}); code != exitError || !strings.Contains(errs.String(), "BACKUP_SECRET_KEY_PREVIOUS") {
		t.Fatalf("rotate-secret without the previous key: exit %d %s", code, errs)
	}
}
