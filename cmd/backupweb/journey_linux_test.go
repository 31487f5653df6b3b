package main

import (
	"bufio"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	cdpwebauthn "github.com/chromedp/cdproto/webauthn"
	"github.com/chromedp/chromedp"

	"github.com/backupweb/backupweb/internal/app"
	"github.com/backupweb/backupweb/internal/factors"
	"github.com/backupweb/backupweb/internal/testkit"
	"github.com/backupweb/backupweb/internal/testkit/browsertest"
	"github.com/backupweb/backupweb/internal/testkit/logtest"
	"github.com/backupweb/backupweb/internal/testkit/redistest"
	"github.com/backupweb/backupweb/internal/tokens"
)

// pinCookie names the instance nginx sends a request to in the journey
// (a, b or c); without it, nginx's upstream takes them in turn.
const pinCookie = "journey_instance"

// journeyInstance is one `backupweb serve` process of the journey: its
// folder (with its own copy of the user file and its own state_dir), its
// configuration, where it listens and what it logged.
type journeyInstance struct {
	name, dir, config, addr string
	log                     *logtest.Buffer
}

// journey is three instances sharing one Redis behind nginx.
type journey struct {
	t         *testing.T
	bin       string
	env       []string
	front     string // http://localhost:PORT, nginx, the instances' public_url
	accessLog string // nginx's: method, path, status, upstream address
	ins       []*journeyInstance
}

// buildProgram builds backupweb into a temporary folder and returns its
// path.
func buildProgram(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the program; skipped with -short")
	}
	bin := filepath.Join(t.TempDir(), "backupweb")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// startJourney starts Redis, three instances and nginx in front of them.
func startJourney(t *testing.T) *journey {
	j := &journey{t: t, bin: buildProgram(t)}
	srv := redistest.Start(t, redistest.Options{Password: redisPassword})
	j.env = append(os.Environ(), "BACKUP_SECRET_KEY="+instancesKey, "REDIS_PASSWORD="+redisPassword)
	top := t.TempDir()
	backups := filepath.Join(top, "backups")
	must(t, os.MkdirAll(backups, 0o755))
	must(t, os.WriteFile(filepath.Join(backups, "db-2026-12-04.sql.gz"), []byte("backup"), 0o644))
	users := addUsers(t, top, "alice", "bob")
	userText, err := os.ReadFile(users)
	must(t, err)
	frontAddr := testkit.FreeAddr(t)
	j.front = "http://localhost:" + strings.TrimPrefix(frontAddr, "127.0.0.1:")
	for _, name := range []string{"a", "b", "c"} {
		in := &journeyInstance{name: name, dir: filepath.Join(top, name), addr: testkit.FreeAddr(t), log: &logtest.Buffer{}}
		must(t, os.MkdirAll(in.dir, 0o700))
		copyUsers := filepath.Join(in.dir, "users.txt")
		must(t, os.WriteFile(copyUsers, userText, 0o600))
		in.config = filepath.Join(in.dir, "backupweb.ini")
		must(t, os.WriteFile(in.config, []byte(fmt.Sprintf(`[server]
listen = %s
store = redis
state_dir = %s
access_log = false
trusted_proxies = 127.0.0.1/32
public_url = %s
[redis]
url = %s
password = ${REDIS_PASSWORD}
prefix = journey:
[backups]
dir = %s
[authentication]
type = flask-login
use_bcrypt = true
users_file = %s
second_factor = optional
passkey_login = true
`, in.addr, filepath.Join(in.dir, "state"), j.front, srv.URL(), backups, copyUsers)), 0o600))
		cmd := exec.Command(j.bin, "serve", "-config", in.config)
		cmd.Dir, cmd.Env, cmd.Stderr = in.dir, j.env, in.log
		testkit.Start(t, cmd)
		testkit.WaitListening(t, in.addr, 30*time.Second, in.log.String)
		j.ins = append(j.ins, in)
	}
	j.accessLog = filepath.Join(top, "nginx-access.log")
	var ups, picks strings.Builder
	for _, in := range j.ins {
		fmt.Fprintf(&ups, "    server %s;\n", in.addr)
		fmt.Fprintf(&picks, "    %s instance_%s;\n", in.name, in.name)
	}
	server := "log_format journey '$request_method $uri $status $upstream_addr';\n" +
		"upstream instances {\n" + ups.String() + "}\n"
	for _, in := range j.ins {
		server += fmt.Sprintf("upstream instance_%s { server %s; }\n", in.name, in.addr)
	}
	server += "map $cookie_" + pinCookie + " $instance {\n    default instances;\n" + picks.String() + "}\n" +
		fmt.Sprintf(`server {
    listen %s;
    access_log %s journey;
    location / {
        proxy_pass http://$instance;
        proxy_set_header Host $http_host;
        proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
        proxy_set_header X-Forwarded-Proto $scheme;
        proxy_next_upstream off;
        add_header X-Journey-Upstream $upstream_addr always;
    }
}
`, frontAddr, j.accessLog)
	runNginx(t, frontAddr, server)
	return j
}

// instance returns the instance named name.
func (j *journey) instance(name string) *journeyInstance {
	for _, in := range j.ins {
		if in.name == name {
			return in
		}
	}
	j.t.Fatalf("no instance %q", name)
	return nil
}

// pin makes c's requests go to the instance named name.
func (j *journey) pin(c *http.Client, name string) {
	u, _ := url.Parse(j.front)
	c.Jar.SetCookies(u, []*http.Cookie{{Name: pinCookie, Value: name, Path: "/"}})
}

// run runs `backupweb ARGS` as the operator would, with the instances'
// environment and stdin as its standard input, and returns its output; t
// fails on an exit other than 0.
func (j *journey) run(stdin io.Reader, args ...string) (stdout, stderr string) {
	j.t.Helper()
	cmd := exec.Command(j.bin, args...)
	cmd.Env, cmd.Stdin = j.env, stdin
	var out, errs strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errs
	if err := cmd.Run(); err != nil {
		j.t.Fatalf("backupweb %s: %v\n%s%s", strings.Join(args, " "), err, out.String(), errs.String())
	}
	return out.String(), errs.String()
}

// servedAt returns the upstream address nginx logged for the one request
// of method and path answered with status, once nginx has logged it (it
// writes the line after the answer); t fails unless there is exactly one.
func (j *journey) servedAt(method, path string, status int) string {
	j.t.Helper()
	var addrs []string
	read := func() bool {
		b, err := os.ReadFile(j.accessLog)
		if err != nil {
			j.t.Fatal(err)
		}
		addrs = nil
		for line := range strings.Lines(string(b)) {
			f := strings.Fields(line)
			if len(f) == 4 && f[0] == method && f[1] == path && f[2] == fmt.Sprint(status) {
				addrs = append(addrs, f[3])
			}
		}
		return len(addrs) > 0
	}
	testkit.WaitUntil(j.t, 10*time.Second, read, func() string {
		b, _ := os.ReadFile(j.accessLog)
		return fmt.Sprintf("nginx logged no %s %s answered %d:\n%s", method, path, status, b)
	})
	if len(addrs) != 1 {
		j.t.Fatalf("nginx logged %s %s answered %d %d times: %v", method, path, status, len(addrs), addrs)
	}
	return addrs[0]
}

// meAt returns the status of GET /api/me at the instance named name with
// c's cookies.
func (j *journey) meAt(c *http.Client, name string) int {
	j.t.Helper()
	j.pin(c, name)
	code, _ := me(j.t, c, j.front)
	return code
}

// bearerAt sends GET /api/backups with token to the instance named name.
func (j *journey) bearerAt(token, name string) int {
	j.t.Helper()
	return bearer(j.t, "GET", j.front+"/api/backups", token, map[string]string{"Cookie": pinCookie + "=" + name}).StatusCode
}

// enrolTOTP runs `backupweb user totp -config F alice` with the
// configuration of the instance named name, typing the code of the secret
// it prints, and returns the secret's codes.
func (j *journey) enrolTOTP(name string) *totpCodes {
	j.t.Helper()
	cmd := exec.Command(j.bin, "user", "totp", "-config", j.instance(name).config, "alice")
	cmd.Env = j.env
	stdin, err := cmd.StdinPipe()
	must(j.t, err)
	stdout, err := cmd.StdoutPipe()
	must(j.t, err)
	var errs strings.Builder
	cmd.Stderr = &errs
	must(j.t, cmd.Start())
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		j.t.Fatalf("user totp printed no URI: %v\n%s", err, errs.String())
	}
	u, err := url.Parse(strings.TrimSpace(line))
	must(j.t, err)
	codes := &totpCodes{secret: u.Query().Get("secret"), used: map[int64]bool{}}
	now := time.Now()
	code, err := factors.TOTPCode(codes.secret, now)
	must(j.t, err)
	codes.used[now.Unix()/30] = true // a code is taken once
	fmt.Fprintln(stdin, code)
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		j.t.Fatalf("user totp: %v\n%s", err, errs.String())
	}
	return codes
}

// TestThreeInstancesOneTruth is the whole journey of docs/instances.md
// with real parts: three `backupweb serve` processes, each with its own
// folder, state_dir and copy of the user file, one Redis, and nginx in
// front taking them in turn (a cookie of the test's own pins a request to
// one instance where the journey needs to know which). A second factor,
// a passkey and a machine token made through one instance are in force on
// the others at once; a clone's old sign count is refused on a third;
// `user factors -reset -config` ends every session of the user
// everywhere; and no instance wrote user state on its own disk.
func TestThreeInstancesOneTruth(t *testing.T) {
	j := startJourney(t)

	// A session made with the password alone, before any factor, through
	// nginx's turn: every instance takes it.
	early := testkit.Client()
	testkit.SignIn(t, early, testkit.Login{Page: j.front + "/login", User: "alice", Password: "pw-alice", Next: "/"})
	for _, in := range j.ins {
		if code := j.meAt(early, in.name); code != http.StatusOK {
			t.Fatalf("the password-only session at %s: %d", in.name, code)
		}
	}

	// TOTP enrolled on A (its configuration; the same store as A's
	// pages) is asked for on every instance: through nginx's turn, where
	// the sign-in posts land on each of them, and on B and C by name.
	codes := j.enrolTOTP("a")
	var landed []string
	everywhere := func() bool {
		return !slices.ContainsFunc(j.ins, func(in *journeyInstance) bool { return !slices.Contains(landed, in.addr) })
	}
	for len(landed) < 12 && !everywhere() {
		c := testkit.Client()
		resp := testkit.Post(t, c, testkit.Login{Page: j.front + "/login", User: "alice", Password: "pw-alice", Next: "/"})
		if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(resp.Header.Get("Location"), "/_backupweb/second-factor") {
			t.Fatalf("the password at %s after the enrolment on A: %d %s", resp.Header.Get("X-Journey-Upstream"), resp.StatusCode, resp.Header.Get("Location"))
		}
		for _, ck := range resp.Cookies() {
			if ck.Name == instanceCookie && ck.Value != "" {
				t.Fatalf("the password alone got a session at %s after the enrolment", resp.Header.Get("X-Journey-Upstream"))
			}
		}
		landed = append(landed, resp.Header.Get("X-Journey-Upstream"))
	}
	if !everywhere() {
		t.Fatalf("nginx's turn did not send a sign-in to every instance: %v", landed)
	}
	t.Logf("sign-ins through nginx's turn landed on %v", landed)
	for _, name := range []string{"b", "c"} {
		c := testkit.Client()
		j.pin(c, name)
		resp := testkit.Post(t, c, testkit.Login{Page: j.front + "/login", User: "alice", Password: "pw-alice", Next: "/"})
		if got := resp.Header.Get("X-Journey-Upstream"); got != j.instance(name).addr || !strings.HasPrefix(resp.Header.Get("Location"), "/_backupweb/second-factor") {
			t.Fatalf("the password on %s (%s): %d %s", name, got, resp.StatusCode, resp.Header.Get("Location"))
		}
	}
	// The code completes the sign-in on B.
	user := testkit.Client()
	j.pin(user, "b")
	if code := signInWithCode(t, user, j.front, "alice", "pw-alice", codes.next(t)); code != http.StatusSeeOther {
		t.Fatalf("the TOTP sign-in on B: %d", code)
	}
	if got := j.servedAt("POST", "/_backupweb/second-factor", 303); got != j.instance("b").addr {
		t.Fatalf("the code was taken at %s, want B (%s)", got, j.instance("b").addr)
	}

	// A passkey enrolled on A in Chromium signs in on B; the same
	// authenticator with its count put back (a clone) is refused on C.
	passkeyJourney(t, j, codes)

	// A token made on A's account page works on B, is revoked on C's,
	// and A refuses it at its next request.
	j.pin(user, "a")
	account := getPage(t, user, j.front+"/_backupweb/account")
	status, body := postPage(t, user, j.front+"/_backupweb/account/tokens", url.Values{
		"csrf_token": {testkit.FormToken([]byte(account))}, "label": {"nightly"}, "password": {"pw-alice"}})
	token := regexp.MustCompile(`bwt_[A-Za-z0-9_-]+`).FindString(body)
	if status != http.StatusOK || !tokens.Wellformed(token) {
		t.Fatalf("making a token on A's account page: %d", status)
	}
	if got := j.servedAt("POST", "/_backupweb/account/tokens", 200); got != j.instance("a").addr {
		t.Fatalf("the token was made at %v, want A (%s)", got, j.instance("a").addr)
	}
	for _, name := range []string{"b", "a"} {
		if code := j.bearerAt(token, name); code != http.StatusOK {
			t.Fatalf("the token on %s: %d", name, code)
		}
	}
	j.pin(user, "c")
	account = getPage(t, user, j.front+"/_backupweb/account")
	out, _ := j.run(nil, "token", "list", "-config", j.instance("c").config)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 || !strings.Contains(account, strings.Fields(lines[1])[0]) {
		t.Fatalf("token list -config: %q; C's account page does not show its id", out)
	}
	if status, _ := postPage(t, user, j.front+"/_backupweb/account/tokens/revoke", url.Values{
		"csrf_token": {testkit.FormToken([]byte(account))}, "id": {strings.Fields(lines[1])[0]}}); status != http.StatusSeeOther {
		t.Fatalf("revoking on C's account page: %d", status)
	}
	if got := j.servedAt("POST", "/_backupweb/account/tokens/revoke", 303); got != j.instance("c").addr {
		t.Fatalf("the token was revoked at %s, want C (%s)", got, j.instance("c").addr)
	}
	if code := j.bearerAt(token, "a"); code != http.StatusUnauthorized {
		t.Fatalf("the revoked token on A at its next request: %d, want 401", code)
	}

	// `user factors -reset -config F` with B's configuration ends every
	// session of alice on every instance: the one made with TOTP, and the
	// one made with the password alone before any factor.
	for _, in := range j.ins {
		for what, c := range map[string]*http.Client{"password-only": early, "TOTP": user} {
			if code := j.meAt(c, in.name); code != http.StatusOK {
				t.Fatalf("before the reset, the %s session at %s: %d", what, in.name, code)
			}
		}
	}
	if _, errs := j.run(nil, "user", "factors", "-reset", "-config", j.instance("b").config, "alice"); !strings.Contains(errs, `removed every second factor of user "alice" from redis`) {
		t.Fatalf("user factors -reset: %s", errs)
	}
	for _, in := range j.ins {
		for what, c := range map[string]*http.Client{"password-only": early, "TOTP": user} {
			if code := j.meAt(c, in.name); code != http.StatusUnauthorized {
				t.Errorf("after the reset, the %s session at %s: %d, want 401", what, in.name, code)
			}
		}
	}

	// No instance wrote user state under its own folder: its state_dir
	// and its user file's folder hold no factors or tokens file.
	for _, in := range j.ins {
		var listing []string
		err := filepath.WalkDir(in.dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(in.dir, p)
			listing = append(listing, rel)
			return nil
		})
		must(t, err)
		t.Logf("instance %s's folder %s holds: %s", in.name, in.dir, strings.Join(listing, " "))
		users := filepath.Join(in.dir, "users.txt")
		for _, p := range []string{
			filepath.Join("state", app.FactorsName), filepath.Join("state", app.TokensName),
			filepath.Base(factors.DefaultPath(users)), filepath.Base(tokens.DefaultPath(users)),
		} {
			if slices.Contains(listing, p) {
				t.Errorf("instance %s wrote user state on its disk: %s", in.name, p)
			}
		}
	}
}

// passkeyJourney is the passkey part of TestThreeInstancesOneTruth, in
// Chromium with a virtual authenticator: enrolled on A after a sign-in
// with TOTP, used alone on B's login page, and refused on C once the
// authenticator's count is put back, as a clone's would be.
func passkeyJourney(t *testing.T, j *journey, codes *totpCodes) {
	ctx := browsertest.New(t)
	authn := browsertest.AddAuthenticator(t, ctx)
	run := func(steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, steps...); err != nil {
			for _, in := range j.ins {
				t.Logf("instance %s (%s) logged:\n%s", in.name, in.addr, in.log)
			}
			b, _ := os.ReadFile(j.accessLog)
			t.Fatalf("%v; nginx served:\n%s", err, b)
		}
	}
	pin := func(name string) {
		t.Helper()
		if _, err := chromedp.Call(ctx, network.SetCookie, network.SetCookieParams{Name: pinCookie, Value: name, URL: j.front + "/"}); err != nil {
			t.Fatalf("Network.setCookie: %v", err)
		}
	}
	text := func(sel string) string {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(v)
	}
	pin("a")
	run(
		chromedp.Navigate(j.front+"/login"),
		browsertest.SignIn("alice", "pw-alice"),
		chromedp.WaitVisible(chromedp.CSS(`#code`)),
		chromedp.SendKeys(chromedp.CSS(`#code`), codes.next(t)),
		chromedp.Click(chromedp.CSS(`#code-form button`)),
		chromedp.WaitVisible(chromedp.CSS(`table.backups`)),
		chromedp.Navigate(j.front+"/_backupweb/reauth?next="+url.QueryEscape("/_backupweb/passkeys")),
		chromedp.WaitVisible(chromedp.CSS(`#reauth-form`)),
		chromedp.SendKeys(chromedp.CSS(`#password`), "pw-alice"),
		chromedp.Click(chromedp.CSS(`#reauth-form button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`#passkey-name`)),
		chromedp.SendKeys(chromedp.CSS(`#passkey-name`), "Laptop"),
		chromedp.Click(chromedp.CSS(`#passkey-add button`)),
		chromedp.WaitVisible(chromedp.CSS(`#passkey-notice`)),
	)
	if got := text(`#passkey-notice`); got != "The passkey was added." {
		t.Fatalf("after adding the passkey on A: %q", got)
	}
	if got := j.servedAt("POST", "/_backupweb/passkeys/finish", 200); got != j.instance("a").addr {
		t.Fatalf("the passkey was added at %s, want A (%s)", got, j.instance("a").addr)
	}

	// On B: signed out there, then the passkey alone from its login page.
	pin("b")
	run(
		chromedp.Navigate(j.front+"/"),
		chromedp.Click(chromedp.CSS(`form.logout button`)),
		chromedp.WaitVisible(chromedp.CSS(`#username`)),
		chromedp.Click(chromedp.CSS(`#passkey-sign-in`)),
		chromedp.WaitVisible(chromedp.CSS(`table.backups`)),
	)
	if got := j.servedAt("POST", "/_backupweb/passkey-login/finish", 200); got != j.instance("b").addr {
		t.Fatalf("the passkey signed in at %s, want B (%s)", got, j.instance("b").addr)
	}

	// On C: the authenticator's count put back below what B recorded, as
	// a clone made before B's sign-in would sign.
	pin("c")
	run(
		chromedp.Click(chromedp.CSS(`form.logout button`)),
		chromedp.WaitVisible(chromedp.CSS(`#username`)),
	)
	creds, err := chromedp.Call(ctx, cdpwebauthn.GetCredentials, cdpwebauthn.GetCredentialsParams{AuthenticatorID: authn})
	if err != nil || len(creds.Credentials) != 1 {
		t.Fatalf("the authenticator's credentials: %v", err)
	}
	zero := 0.0
	if _, err := chromedp.Call(ctx, cdpwebauthn.SetCredentialProperties, cdpwebauthn.SetCredentialPropertiesParams{
		AuthenticatorID: authn, CredentialID: creds.Credentials[0].CredentialID, SignCount: &zero,
	}); err != nil {
		t.Fatalf("WebAuthn.setCredentialProperties: %v", err)
	}
	run(
		chromedp.Click(chromedp.CSS(`#passkey-sign-in`)),
		chromedp.WaitVisible(chromedp.CSS(`#passkey-error`)),
	)
	if got := j.servedAt("POST", "/_backupweb/passkey-login/finish", 401); got != j.instance("c").addr {
		t.Fatalf("the clone was refused at %s, want C (%s)", got, j.instance("c").addr)
	}
	if logs := j.instance("c").log.String(); !strings.Contains(logs, `reason="passkey sign count did not increase"`) || !strings.Contains(logs, "user=alice") {
		t.Fatalf("C did not log the clone's refusal:\n%s", logs)
	}
}
