package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/testkit"
	"github.com/backupweb/backupweb/internal/testkit/wstest"
)

// The reload tests send SIGHUP to this process, which the serve under
// test listens for. This channel, never read, keeps SIGHUP caught for
// the whole test binary, so a signal arriving while no serve listens (a
// serve just stopped, or a terminal's hangup) cannot end every test.
func init() { signal.Notify(make(chan os.Signal, 1), syscall.SIGHUP) }

// reloadRig is `backupweb serve` in proxy mode (type flask-login,
// second_factor = optional, a groups file, [access] rules) in front of a
// small upstream, with its configuration as keys to change and reload.
type reloadRig struct {
	t       *testing.T
	dir     string
	keys    map[string]string // "section.key" -> value
	s       *served
	base    string // http://ADDR
	reloads int    // reloads seen in the log so far
}

// reloadDone are the lines that end a reload, applied or refused.
var reloadDone = []string{"reload: configuration applied", "reload: the configuration has errors"}

func newReloadRig(t *testing.T) *reloadRig {
	t.Helper()
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/poll" {
			// A long poll: the answer starts, then waits for its end.
			w.WriteHeader(http.StatusOK)
			io.WriteString(w, "waiting\n")
			w.(http.Flusher).Flush()
			<-r.Context().Done()
			return
		}
		fmt.Fprintf(w, "upstream path=%s user=%q who=%q\n", r.URL.Path, r.Header.Get("X-Forwarded-User"), r.Header.Get("X-Who"))
	}))
	t.Cleanup(up.Close)
	return newReloadRigTo(t, up.URL)
}

// newReloadRigTo is newReloadRig in front of the upstream at upstream
// (http://HOST:PORT).
func newReloadRigTo(t *testing.T, upstream string) *reloadRig {
	t.Helper()
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	users := write("users", testkit.Users(t, map[string]string{"alice": "alice pw", "bob": "bob pw"}, "alice", "bob"))
	groups := write("groups", "readers: alice bob\n")
	os.Mkdir(filepath.Join(dir, "backups"), 0o700)
	rig := &reloadRig{t: t, dir: dir, keys: map[string]string{
		"server.listen":                "127.0.0.1:0",
		"server.state_dir":             filepath.Join(dir, "state"),
		"proxy.upstream":               upstream,
		"authentication.type":          "flask-login",
		"authentication.users_file":    users,
		"authentication.use_bcrypt":    "true",
		"authentication.second_factor": "optional",
		"authentication.groups_file":   groups,
		"access.rule5":                 "* ^/ allow group:readers",
		"access.default":               "deny",
	}}
	rig.s = startServe(t, map[string]string{"BACKUP_SECRET_KEY": strings.Repeat("ab", 32)}, "-config", rig.write())
	rig.base = "http://" + rig.s.addr
	return rig
}

// write writes the configuration file from r.keys and returns its path.
func (r *reloadRig) write() string {
	r.t.Helper()
	bySection := map[string][]string{}
	for k, v := range r.keys {
		sec, key, _ := strings.Cut(k, ".")
		bySection[sec] = append(bySection[sec], key+" = "+v)
	}
	var b strings.Builder
	for _, sec := range []string{"server", "backups", "proxy", "authentication", "redis", "ui", "access"} {
		if lines := bySection[sec]; len(lines) > 0 {
			slices.Sort(lines)
			b.WriteString("[" + sec + "]\n" + strings.Join(lines, "\n") + "\n")
		}
	}
	p := filepath.Join(r.dir, "backupweb.ini")
	if err := os.WriteFile(p, []byte(b.String()), 0o600); err != nil {
		r.t.Fatal(err)
	}
	return p
}

// hup sends SIGHUP and waits until the reload has ended.
func (r *reloadRig) hup() {
	r.t.Helper()
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		r.t.Fatal(err)
	}
	r.reloads++
	testkit.WaitUntil(r.t, 20*time.Second, func() bool {
		n := 0
		for _, l := range reloadDone {
			n += strings.Count(r.s.log.String(), l)
		}
		return n >= r.reloads
	}, func() string { return "the reload did not end:\n" + r.s.log.String() })
}

// client returns a client signed in as user (anonymous for "").
func (r *reloadRig) client(user string) *http.Client {
	r.t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Timeout: 10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	if user != "" {
		testkit.SignIn(r.t, c, testkit.Login{Page: r.base + "/login", User: user, Password: user + " pw"})
	}
	return c
}

// get returns the status and body of GET path with c.
func (r *reloadRig) get(c *http.Client, path string) (int, string) {
	r.t.Helper()
	resp, err := c.Get(r.base + path)
	if err != nil {
		r.t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// TestReloadKeys goes through the keys: each is changed in the file, the
// process gets SIGHUP, and either the change takes effect or the reload's
// one error line names the key with "restart to apply" (and the running
// value stays).
func TestReloadKeys(t *testing.T) {
	type check func(t *testing.T, r *reloadRig, alice *http.Client)
	status := func(user, path string, want int, body string) check {
		return func(t *testing.T, r *reloadRig, alice *http.Client) {
			c := alice
			if user == "" {
				c = r.client("")
			}
			code, got := r.get(c, path)
			if code != want || !strings.Contains(got, body) {
				t.Errorf("GET %s as %q: %d %q, want %d with %q", path, user, code, got, want, body)
			}
		}
	}
	restart := func(key string) check {
		return func(t *testing.T, r *reloadRig, alice *http.Client) {
			log := r.s.log.String()
			var line string
			for l := range strings.Lines(log) {
				if strings.Contains(l, "restart to apply") {
					line = l
				}
			}
			if !strings.Contains(line, "level=ERROR") || !strings.Contains(line, key) {
				t.Errorf("no error line naming %s with restart to apply:\n%s", key, log)
			}
			// The running configuration still serves.
			if code, got := r.get(alice, "/x"); code != http.StatusOK || !strings.Contains(got, `user="alice"`) {
				t.Errorf("after the reload: %d %q, want the upstream for alice", code, got)
			}
		}
	}
	// noRestart: a live key whose effect the log shows: no restart line,
	// and the reload applied.
	noRestart := func(t *testing.T, r *reloadRig, alice *http.Client) {
		if log := r.s.log.String(); strings.Contains(log, "restart to apply") || !strings.Contains(log, "reload: configuration applied") {
			t.Errorf("a live key is not applied as such:\n%s", log)
		}
	}
	// throttled: one wrong password for user, then the right one, from a
	// new client, is answered want.
	throttled := func(user string, want int) check {
		return func(t *testing.T, r *reloadRig, alice *http.Client) {
			c := r.client("")
			page := r.base + "/login"
			testkit.Post(t, c, testkit.Login{Page: page, User: user, Password: "wrong"})
			if resp := testkit.Post(t, c, testkit.Login{Page: page, User: user, Password: user + " pw"}); resp.StatusCode != want {
				t.Errorf("the right password after one wrong one: %d, want %d", resp.StatusCode, want)
			}
		}
	}
	tests := []struct {
		key, value string
		before     check // nil: none
		after      check
	}{
		// Live keys.
		{"ui.title", "Reloaded Title", nil, status("", "/login", http.StatusOK, "Reloaded Title")},
		{"ui.product_name", "Syncthing", nil, status("", "/login", http.StatusOK, "Syncthing")},
		{"ui.icon", "none", status("", "/login", http.StatusOK, "icon.svg"), func(t *testing.T, r *reloadRig, alice *http.Client) {
			if code, got := r.get(r.client(""), "/login"); code != http.StatusOK || strings.Contains(got, "<img") || strings.Contains(got, `rel="icon"`) {
				t.Errorf("after icon = none: %d, the page still shows an icon:\n%s", code, got)
			}
		}},
		{"access.rule2", "* ^/secret deny", status("alice", "/secret", http.StatusOK, "upstream"), status("alice", "/secret", http.StatusForbidden, "")},
		{"access.rule5", "* ^/ allow group:admins", status("alice", "/x", http.StatusOK, "upstream"), status("alice", "/x", http.StatusForbidden, "")},
		{"server.trusted_proxies", "127.0.0.1", nil, noRestart},
		{"authentication.max_failures", "1", throttled("bob", http.StatusSeeOther), throttled("bob", http.StatusTooManyRequests)},
		{"authentication.max_user_failures", "1", throttled("bob", http.StatusSeeOther), throttled("bob", http.StatusTooManyRequests)},
		{"authentication.failure_window", "1h", nil, noRestart},
		{"authentication.attempt_wait", "2s", nil, noRestart},
		{"authentication.type", "Login", nil, noRestart}, // the same type
		{"proxy.allow_users", "bob", status("alice", "/x", http.StatusOK, "upstream"), status("alice", "/x", http.StatusForbidden, "")},
		{"proxy.skip_auth_routes", "GET=^/public$", status("", "/public", http.StatusUnauthorized, ""), status("", "/public", http.StatusOK, "upstream path=/public")},
		{"proxy.user_header", "X-Who", nil, status("alice", "/x", http.StatusOK, `who="alice"`)},
		{"authentication.second_factor", "required", nil, func(t *testing.T, r *reloadRig, alice *http.Client) {
			if code, _ := r.get(alice, "/x"); code == http.StatusOK {
				t.Errorf("a password-only session still passes after second_factor = required")
			}
			if log := r.s.log.String(); !strings.Contains(log, `reason="second factor required"`) || strings.Contains(log, "user removed or password changed") {
				t.Errorf("the refusal does not say that a second factor is now required:\n%s", log)
			}
			// The password alone now leads to the enrolment.
			resp := testkit.SignIn(t, r.client(""), testkit.Login{Page: r.base + "/login", User: "bob", Password: "bob pw"})
			if loc := resp.Header.Get("Location"); !strings.HasPrefix(loc, "/_backupweb/second-factor/enrol") {
				t.Errorf("a sign-in with the password alone leads to %q, want the enrolment", loc)
			}
		}},
		// Keys that need a restart.
		{"server.listen", "127.0.0.1:1", nil, restart("server.listen")},
		{"server.state_dir", "/nonexistent-but-fine", nil, restart("server.state_dir")},
		{"server.metrics_listen", "127.0.0.1:0", nil, restart("server.metrics_listen")},
		{"server.public_url", "https://backups.example.org", nil, restart("server.public_url")},
		{"proxy.redirect_hosts", "example.org", nil, restart("proxy.redirect_hosts")},
		{"authentication.idle_renewal", "any", nil, restart("authentication.idle_renewal")},
		{"authentication.factors_file", "/nonexistent/users.factors", nil, restart("authentication.factors_file")},
		{"backups.dir", "/nonexistent", nil, restart("backups.dir")},
		{"authentication.session_lifetime", "1h", nil, restart("authentication.session_lifetime")},
		{"authentication.login_view", "/signin", nil, restart("authentication.login_view")},
		{"authentication.second_factor", "off", status("", "/_backupweb/second-factor", http.StatusSeeOther, ""), status("", "/_backupweb/second-factor", http.StatusNotFound, "")},
	}
	for _, tt := range tests {
		t.Run(tt.key+"="+tt.value, func(t *testing.T) {
			r := newReloadRig(t)
			r.t = t
			alice := r.client("alice")
			if tt.before != nil {
				tt.before(t, r, alice)
			}
			r.keys[tt.key] = tt.value
			r.write()
			r.hup()
			tt.after(t, r, alice)
		})
	}
}

// TestReloadTurnsSecondFactorOn: second_factor goes from off to optional
// and then required on SIGHUP, no restart: a user who enrolled while it
// was off is asked for the code at the next sign-in, and her session made
// with the password alone ends at its next request; a user without a
// factor keeps signing in with the password under optional, and is
// refused under required. Back to off, the step's routes are gone.
func TestReloadTurnsSecondFactorOn(t *testing.T) {
	r := newReloadRig(t)
	r.keys["authentication.second_factor"] = "off"
	r.write()
	r.hup()
	if code, _ := r.get(r.client(""), "/_backupweb/second-factor"); code != http.StatusNotFound {
		t.Fatalf("the second-factor step with second_factor = off: %d, want 404", code)
	}
	if code, _, stderr := enrolPipeWith(t, strings.Repeat("ab", 32), r.keys["authentication.users_file"], "alice", "-config", filepath.Join(r.dir, "backupweb.ini")); code != exitOK {
		t.Fatalf("user totp: %d %s", code, stderr)
	}
	alice, bob := r.client("alice"), r.client("bob") // the password alone, since it is off
	for _, c := range []*http.Client{alice, bob} {
		if code, _ := r.get(c, "/x"); code != http.StatusOK {
			t.Fatalf("a session made while second_factor = off: %d, want 200", code)
		}
	}

	r.keys["authentication.second_factor"] = "optional"
	r.write()
	r.hup()
	if log := r.s.log.String(); strings.Contains(log, "restart to apply") {
		t.Fatalf("second_factor from off asks for a restart:\n%s", log)
	}
	if code, _ := r.get(alice, "/x"); code == http.StatusOK {
		t.Error("alice's password-only session still passes once her factor is asked for")
	}
	if !strings.Contains(r.s.log.String(), `reason="second factor required"`) {
		t.Errorf("the refusal does not say that a second factor is required:\n%s", r.s.log.String())
	}
	if loc := testkit.Post(t, r.client(""), testkit.Login{Page: r.base + "/login", User: "alice", Password: "alice pw"}).Header.Get("Location"); !strings.HasPrefix(loc, "/_backupweb/second-factor") {
		t.Errorf("alice's sign-in leads to %q, want the second-factor step", loc)
	}
	if code, _ := r.get(bob, "/x"); code != http.StatusOK {
		t.Errorf("bob, who has no factor, under optional: %d, want 200", code)
	}

	r.keys["authentication.second_factor"] = "required"
	r.write()
	r.hup()
	if code, _ := r.get(bob, "/x"); code == http.StatusOK {
		t.Error("bob's password-only session still passes under required")
	}
	if loc := testkit.Post(t, r.client(""), testkit.Login{Page: r.base + "/login", User: "bob", Password: "bob pw"}).Header.Get("Location"); !strings.HasPrefix(loc, "/_backupweb/second-factor/enrol") {
		t.Errorf("bob's sign-in leads to %q, want the enrolment", loc)
	}
}

// TestReloadRefusesBadFile: a file check-config refuses changes nothing,
// not even its good keys, and one error line says so.
func TestReloadRefusesBadFile(t *testing.T) {
	r := newReloadRig(t)
	alice := r.client("alice")
	r.keys["access.rule2"] = "* ^/secret deny"
	r.keys["authentication.second_factor"] = "always"
	r.write()
	r.hup()
	log := r.s.log.String()
	if n := strings.Count(log, "reload: the configuration has errors"); n != 1 || !strings.Contains(log, "second_factor") {
		t.Errorf("want one error line naming second_factor, got %d:\n%s", n, log)
	}
	if code, got := r.get(alice, "/secret"); code != http.StatusOK || !strings.Contains(got, "upstream") {
		t.Errorf("the refused file's rule applies: %d %q", code, got)
	}
	if strings.Contains(log, "reload: configuration applied") {
		t.Errorf("the refused file is reported applied:\n%s", log)
	}
}

// TestReloadClosesLongPoll: a long poll through the proxy, open while the
// rules admit its user, is closed once a reload makes them refuse the
// user: an edit of the groups file, a new [access] rule, allow_users, or
// second_factor = required for a session made with the password alone.
func TestReloadClosesLongPoll(t *testing.T) {
	rulesLine := "the access rules now refuse the user of an open connection"
	tests := []struct {
		name   string
		change func(r *reloadRig)
		line   string // what the log says about the closed connection
	}{
		{"groups file", func(r *reloadRig) { writeGroups(t, r.keys["authentication.groups_file"], "readers: bob\n") }, rulesLine},
		{"access rule", func(r *reloadRig) { r.keys["access.rule1"] = "* ^/poll deny" }, rulesLine},
		{"allow_users", func(r *reloadRig) { r.keys["proxy.allow_users"] = "bob" }, rulesLine},
		{"second_factor", func(r *reloadRig) { r.keys["authentication.second_factor"] = "required" }, "its sign-in has ended"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newReloadRig(t)
			r.t = t
			alice := r.client("alice")
			resp, err := alice.Get(r.base + "/poll")
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			line := make([]byte, len("waiting\n"))
			if _, err := io.ReadFull(resp.Body, line); err != nil || resp.StatusCode != http.StatusOK {
				t.Fatalf("the long poll did not start: %d %v", resp.StatusCode, err)
			}
			ended := make(chan error, 1)
			go func() { _, err := io.Copy(io.Discard, resp.Body); ended <- err }()
			select {
			case err := <-ended:
				t.Fatalf("the long poll ended while the rules admit alice: %v", err)
			case <-time.After(time.Second): // several rechecks: it holds
			}
			tt.change(r)
			r.write()
			r.hup()
			select {
			case <-ended:
			case <-time.After(10 * time.Second):
				t.Fatalf("the long poll stays open after the reload:\n%s", r.s.log.String())
			}
			if log := r.s.log.String(); !strings.Contains(log, tt.line) {
				t.Errorf("no line says %q:\n%s", tt.line, log)
			}
		})
	}
}

// TestReloadClosesWebSocket: alice's and bob's WebSockets through the
// built-in proxy to a real WebSocket server stay open while the rules
// admit both; once the groups file drops alice from the group the rules
// require and SIGHUP reloads it, alice's is closed (at the upstream too)
// and bob's goes on.
func TestReloadClosesWebSocket(t *testing.T) {
	ws := wstest.StartEcho(t)
	r := newReloadRigTo(t, ws.URL)
	dial := func(user string) *wstest.Conn {
		t.Helper()
		c := r.client(user)
		base, _ := url.Parse(r.base)
		conn := wstest.Dial(t, r.base, "/comms", func(req *http.Request) {
			for _, k := range c.Jar.Cookies(base) {
				req.AddCookie(k)
			}
		})
		ws.Wait(t, "open", 5*time.Second)
		return conn
	}
	alice, bob := dial("alice"), dial("bob")
	for _, c := range []*wstest.Conn{alice, bob} {
		if err := c.Echo("before"); err != nil {
			t.Fatalf("before the reload: %v", err)
		}
	}
	time.Sleep(time.Second) // several rechecks: both hold
	if err := alice.Echo("still"); err != nil {
		t.Fatalf("alice's WebSocket ended while the rules admit her: %v", err)
	}

	writeGroups(t, r.keys["authentication.groups_file"], "readers: bob\n")
	r.hup()
	alice.ClosedWithin(t, 10*time.Second)
	ws.Wait(t, "closed", 10*time.Second)
	if err := bob.Echo("bob goes on"); err != nil {
		t.Fatalf("bob's WebSocket ended with alice's: %v", err)
	}
	if log := r.s.log.String(); !strings.Contains(log, "the access rules now refuse the user of an open connection") {
		t.Errorf("no line says why alice's connection was closed:\n%s", log)
	}
}
