package main

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/factors"
	"github.com/backupweb/backupweb/internal/testkit"
	"github.com/backupweb/backupweb/internal/testkit/logtest"
)

// unprivileged returns the ids of the account nobody, for tests that
// give files to another account and run the service as it: they need root
// (to chown, and to start a process as another user) and skip otherwise.
func unprivileged(t *testing.T) (uid, gid int) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: gives files to the account nobody and runs the service as it")
	}
	u, err := user.Lookup("nobody")
	if err != nil {
		t.Skipf("no account nobody on this machine: %v", err)
	}
	uid, _ = strconv.Atoi(u.Uid)
	gid, _ = strconv.Atoi(u.Gid)
	return uid, gid
}

// openRoot returns a temporary folder that every account may enter, as
// / is: the folders above it included.
func openRoot(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	for d := root; d != "/" && d != os.TempDir(); d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// placeFile makes path (a folder when text is nil) with owner, group and mode.
func placeFile(t *testing.T, path string, text []byte, uid, gid int, mode os.FileMode) {
	t.Helper()
	var err error
	if text == nil {
		err = os.MkdirAll(path, 0o700)
	} else {
		err = os.WriteFile(path, text, 0o600)
	}
	if err == nil {
		err = os.Chown(path, uid, gid)
	}
	if err == nil {
		err = os.Chmod(path, mode)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// packagedINI returns packaging/backupweb.ini with its paths under root
// and, when auth is set, its commented [authentication] example turned
// on, followed by extra lines.
func packagedINI(t *testing.T, root string, auth bool, extra string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "packaging", "backupweb.ini"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	if auth {
		for _, line := range []string{"[authentication]", "type = flask-login", "users_file = /etc/backupweb/users", "use_bcrypt = True"} {
			if !strings.Contains(text, "\n# "+line+"\n") {
				t.Fatalf("packaging/backupweb.ini lost its example line %q", line)
			}
			text = strings.Replace(text, "\n# "+line+"\n", "\n"+line+"\n", 1)
		}
		text += extra
	}
	for _, p := range []string{"/etc/backupweb", "/var/lib/backupweb", "/var/backups/backupweb"} {
		text = strings.ReplaceAll(text, p, root+p)
	}
	return text
}

// TestPackagedLayoutNeedsNoWrite runs check-config -as-user on the
// packaged configuration, in the package's owners and modes (postinst),
// with the account nobody in the role of the package's user backupweb:
// as installed, and with its flask-login example turned on (second factor
// and tokens, the files the service writes) it needs no write where the
// service may not, since those files default to state_dir. A tokens_file
// set beside the user file, in /etc, draws the write warning.
func TestPackagedLayoutNeedsNoWrite(t *testing.T) {
	uid, gid := unprivileged(t)
	tests := []struct {
		name  string
		auth  bool
		extra string
		warn  bool
	}{
		{"as installed", false, "", false},
		{"flask-login example", true, "second_factor = optional\n", false},
		{"tokens_file in /etc", true, "tokens_file = {etc}/users.tokens\n", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := openRoot(t)
			etc := filepath.Join(root, "etc", "backupweb")
			placeFile(t, filepath.Join(root, "etc"), nil, 0, 0, 0o755)
			placeFile(t, etc, nil, 0, gid, 0o750)
			ini := filepath.Join(etc, "backupweb.ini")
			text := strings.ReplaceAll(packagedINI(t, root, tt.auth, tt.extra), "{etc}", etc)
			placeFile(t, ini, []byte(text), 0, gid, 0o640)
			placeFile(t, filepath.Join(etc, "env"), []byte("BACKUP_SECRET_KEY="+strings.Repeat("ab", 32)+"\n"), 0, gid, 0o640)
			placeFile(t, filepath.Join(etc, "users"), []byte("alice:"+testHashA+"\n"), uid, gid, 0o600)
			placeFile(t, filepath.Join(root, "var"), nil, 0, 0, 0o755)
			placeFile(t, filepath.Join(root, "var", "lib"), nil, 0, 0, 0o755)
			placeFile(t, filepath.Join(root, "var", "lib", "backupweb"), nil, uid, gid, 0o700)
			placeFile(t, filepath.Join(root, "var", "backups"), nil, 0, 0, 0o755)
			placeFile(t, filepath.Join(root, "var", "backups", "backupweb"), nil, 0, gid, 0o750|os.ModeSetgid)
			c, _, stderr := testCLI(context.Background(), "", map[string]string{"BACKUP_SECRET_KEY": strings.Repeat("ab", 32)})
			code := c.main([]string{"check-config", "-as-user", "nobody", "-config", ini})
			out := stderr.String()
			if code != exitOK {
				t.Fatalf("exit %d:\n%s", code, out)
			}
			warned := strings.Contains(out, "by writing a new copy into this folder")
			if warned != tt.warn {
				t.Fatalf("write warning %v, want %v:\n%s", warned, tt.warn, out)
			}
			if !tt.warn && strings.Contains(out, "cannot") {
				t.Errorf("the service user cannot use a file of the packaged layout:\n%s", out)
			}
		})
	}
}

// TestServeUnprivilegedBesideReadOnlyEtc runs the program as the account
// nobody with its configuration and user file in a root-owned folder of
// mode 0755 (as /etc is to the service under ProtectSystem=strict): a user
// enrols TOTP and makes a machine token through the pages, and both land
// in state_dir, the one folder the service may write; nothing new appears
// beside the configuration.
func TestServeUnprivilegedBesideReadOnlyEtc(t *testing.T) {
	uid, gid := unprivileged(t)
	if testing.Short() {
		t.Skip("builds the program; skipped with -short")
	}
	root := openRoot(t)
	bin := filepath.Join(root, "backupweb")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	etc := filepath.Join(root, "etc")
	state := filepath.Join(root, "state")
	backups := filepath.Join(root, "backups")
	placeFile(t, etc, nil, 0, 0, 0o755)
	placeFile(t, state, nil, uid, gid, 0o700)
	placeFile(t, backups, nil, 0, 0, 0o755)
	placeFile(t, filepath.Join(backups, "db.sql"), []byte("dump"), 0, 0, 0o644)
	users := testkit.Users(t, map[string]string{"alice": "alice-pw"}, "alice")
	placeFile(t, filepath.Join(etc, "users"), []byte(users), uid, gid, 0o600)
	ini := filepath.Join(etc, "backupweb.ini")
	placeFile(t, ini, []byte("[server]\nlisten = 127.0.0.1:0\nstate_dir = "+state+"\n\n[backups]\ndir = "+backups+
		"\n\n[authentication]\ntype = flask-login\nusers_file = "+filepath.Join(etc, "users")+"\nuse_bcrypt = True\nsecond_factor = required\n"), 0, 0, 0o644)
	before, _ := os.ReadDir(etc)

	cmd := exec.Command(bin, "serve", "-config", ini)
	cmd.Dir = root
	cmd.Env = []string{"BACKUP_SECRET_KEY=" + strings.Repeat("ab", 32), "PATH=/usr/bin:/bin"}
	// In a process group of its own, killed whole when the test ends;
	// waited for here only (testkit.Start would wait for it a second time).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
	stderr := &logtest.Buffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan int, 1)
	go func() { cmd.Wait(); done <- cmd.ProcessState.ExitCode() }()
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			t.Error("serve did not end after SIGKILL")
		}
	})
	base := "http://" + waitListening(t, stderr, done)

	client := testkit.Client()
	resp := testkit.SignIn(t, client, testkit.Login{Page: base + "/login", User: "alice", Password: "alice-pw"})
	if loc := resp.Header.Get("Location"); !strings.HasPrefix(loc, "/_backupweb/second-factor/enrol") {
		t.Fatalf("after the password: %s, want the enrolment page", loc)
	}
	page := getPage(t, client, base+"/_backupweb/second-factor/enrol")
	secret := submatch(t, page, `id="totp-secret">([A-Z2-7]+)<`)
	code, err := factors.TOTPCode(secret, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	form := url.Values{"code": {code}, "csrf_token": {testkit.FormToken([]byte(page))}, "next": {"/"},
		"enrolment": {submatch(t, page, `name="enrolment" value="([^"]+)"`)}}
	if status, body := postPage(t, client, base+"/_backupweb/second-factor/enrol", form); status != http.StatusOK {
		t.Fatalf("enrolment: %d\n%s\n%s", status, body, stderr)
	}
	account := getPage(t, client, base+"/_backupweb/account")
	form = url.Values{"csrf_token": {testkit.FormToken([]byte(account))}, "label": {"nightly"}, "password": {"alice-pw"}}
	status, body := postPage(t, client, base+"/_backupweb/account/tokens", form)
	if status != http.StatusOK {
		t.Fatalf("making a token: %d\n%s\n%s", status, body, stderr)
	}
	token := regexp.MustCompile(`bwt_[A-Za-z0-9_-]+`).FindString(body)
	if got := bearer(t, "GET", base+"/api/backups", token, nil).StatusCode; token == "" || got != http.StatusOK {
		t.Fatalf("the new token %q: %d", token, got)
	}
	for _, name := range []string{"factors", "tokens"} {
		fi, err := os.Stat(filepath.Join(state, name))
		if err != nil {
			t.Fatalf("state_dir lacks %s: %v", name, err)
		}
		if st := fi.Sys().(*syscall.Stat_t); int(st.Uid) != uid || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: owner %d mode %04o, want %d 0600", name, st.Uid, fi.Mode().Perm(), uid)
		}
	}
	if after, _ := os.ReadDir(etc); len(after) != len(before) {
		t.Errorf("the service wrote beside its configuration: %v", after)
	}
}

// getPage gets pageURL with c and returns its body; t fails unless 200.
func getPage(t *testing.T, c *http.Client, pageURL string) string {
	t.Helper()
	resp, err := c.Get(pageURL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d\n%s", pageURL, resp.StatusCode, b)
	}
	return string(b)
}

// postPage posts form to pageURL with c and returns the status and body.
func postPage(t *testing.T, c *http.Client, pageURL string, form url.Values) (int, string) {
	t.Helper()
	resp, err := c.PostForm(pageURL, form)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// submatch returns the first group of pattern in page; t fails without it.
func submatch(t *testing.T, page, pattern string) string {
	t.Helper()
	m := regexp.MustCompile(pattern).FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no %s in the page:\n%s", pattern, page)
	}
	return m[1]
}
