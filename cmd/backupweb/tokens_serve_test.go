package main

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/testkit"
	"github.com/backupweb/backupweb/internal/tokens"
)

// tokenSetup writes a user file (alice, bob), a groups file (alice in
// dba) and a backups folder into a fresh folder, and returns the folder.
func tokenSetup(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	users := testkit.Users(t, map[string]string{"alice": "alice-pw", "bob": "bob-pw"}, "alice", "bob")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(dir, "users"), []byte(users), 0o600))
	must(os.WriteFile(filepath.Join(dir, "groups"), []byte("dba: alice\n"), 0o600))
	must(os.MkdirAll(filepath.Join(dir, "backups"), 0o755))
	must(os.WriteFile(filepath.Join(dir, "backups", "db.sql"), []byte("dump"), 0o600))
	return dir
}

// newToken makes a token for user in dir's user file with the extra
// flags of `token add`, and returns it.
func newToken(t *testing.T, dir, user string, flags ...string) string {
	t.Helper()
	args := append(append([]string{"add", "-file", filepath.Join(dir, "users")}, flags...), user)
	code, out, stderr := runTokenCmd(args...)
	if code != exitOK {
		t.Fatalf("token add: %d %s", code, stderr)
	}
	return strings.TrimSpace(out)
}

// loginINI is a flask-login configuration over dir's files, with extra
// sections appended.
func loginINI(dir, extra string) string {
	return fmt.Sprintf("[server]\nlisten = 127.0.0.1:0\nstate_dir = %[1]s/state\n\n[backups]\ndir = %[1]s/backups\n\n"+
		"[authentication]\ntype = flask-login\nusers_file = %[1]s/users\nuse_bcrypt = true\ngroups_file = %[1]s/groups\nmax_failures = 3\n\n%[2]s",
		dir, extra)
}

// bearer sends method path to base with the token, and extra headers.
func bearer(t *testing.T, method, url, token string, hdr map[string]string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	req.Header.Set("Accept", "application/json")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := testkit.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

func TestTokensInCatalogMode(t *testing.T) {
	dir := tokenSetup(t)
	full := newToken(t, dir, "alice", "-label", "cron")
	scoped := newToken(t, dir, "alice", "-read-only", "-path", "/backups/")
	expired := newToken(t, dir, "bob", "-expires", "1s")
	ini := loginINI(dir, "[access]\nrule1 = GET ^/api/me$ second_factor\n")
	addr, log := serveInProcess(t, dir, ini, nil)
	base := "http://" + addr
	time.Sleep(1100 * time.Millisecond) // bob's token expires

	tests := []struct {
		name, method, path, token string
		want                      int
	}{
		{"token lists backups", "GET", "/api/backups", full, 200},
		{"token downloads", "GET", "/backups/db.sql", full, 200},
		{"no token", "GET", "/api/backups", "", 401},
		{"scoped token under its path", "GET", "/backups/db.sql", scoped, 200},
		{"scoped token elsewhere", "GET", "/api/backups", scoped, 403},
		{"read-only token heads", "HEAD", "/backups/db.sql", scoped, 200},
		{"token never satisfies second_factor", "GET", "/api/me", full, 403},
	}
	for _, tt := range tests {
		if got := bearer(t, tt.method, base+tt.path, tt.token, nil).StatusCode; got != tt.want {
			t.Errorf("%s: %s %s = %d, want %d", tt.name, tt.method, tt.path, got, tt.want)
		}
	}
	// Wrong, expired and made-up tokens count against the address like
	// wrong passwords: 401 up to max_failures, then 429 even for a
	// right token from there.
	wrong := full[:len(full)-2] + "AA"
	for i, tok := range []string{wrong, expired, "bwt_nonsense"} {
		if got := bearer(t, "GET", base+"/api/backups", tok, nil).StatusCode; got != 401 {
			t.Fatalf("bad token %d: %d, want 401", i, got)
		}
	}
	if got := bearer(t, "GET", base+"/api/backups", full, nil).StatusCode; got != 429 {
		t.Fatalf("after three bad tokens: %d, want 429", got)
	}
	for _, want := range []string{`reason="unknown or revoked token"`, `reason="token expired"`, `reason="outside the token's scope"`, "auth token used from a new address"} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("the log lacks %s:\n%s", want, log)
		}
	}
	if strings.Contains(log.String(), full) || strings.Contains(log.String(), wrong) {
		t.Fatal("a token reached the log")
	}
}

func TestTokenRevokedWithinTheWatchInterval(t *testing.T) {
	dir := tokenSetup(t)
	tok := newToken(t, dir, "alice")
	// Every poll before the file is read again is a refused token: the
	// limit is raised so that waiting is not what blocks the address.
	addr, _ := serveInProcess(t, dir, strings.Replace(loginINI(dir, ""), "max_failures = 3", "max_failures = 1000", 1), nil)
	url := "http://" + addr + "/api/backups"
	if got := bearer(t, "GET", url, tok, nil).StatusCode; got != 200 {
		t.Fatalf("before: %d", got)
	}
	// serve moved the file from beside the user file into state_dir.
	_, st := tokens.Open(filepath.Join(dir, "state", "tokens"), nil, nil).Lookup(tok)
	list, _ := tokens.Read(filepath.Join(dir, "state", "tokens"))
	if st != tokens.Valid || len(list) != 1 {
		t.Fatal("token not in the file")
	}
	if code, _, stderr := runTokenCmd("revoke", "-file", filepath.Join(dir, "users"), "-config", filepath.Join(dir, "backupweb.ini"), list[0].ID); code != exitOK {
		t.Fatal(stderr)
	}
	testkit.WaitUntil(t, 5*time.Second, func() bool { return bearer(t, "GET", url, tok, nil).StatusCode == 401 },
		func() string { return "the revoked token is still admitted" })
	// user passwd ends the user's tokens too. Without -config, the
	// commands find the service's files through ./backupweb.ini.
	t.Chdir(dir)
	tok2 := newToken(t, dir, "alice")
	var last int
	testkit.WaitUntil(t, 5*time.Second, func() bool { last = bearer(t, "GET", url, tok2, nil).StatusCode; return last == 200 },
		func() string { return fmt.Sprintf("the new token is not admitted: %d", last) })
	if code, _, stderr := runUserCmd("new-pw\n", "passwd", "-file", filepath.Join(dir, "users"), "-cost", "4", "alice"); code != exitOK {
		t.Fatal(stderr)
	}
	testkit.WaitUntil(t, 5*time.Second, func() bool { return bearer(t, "GET", url, tok2, nil).StatusCode == 401 },
		func() string { return "the token outlived user passwd" })
}

// echoUpstream answers with the identity and groups it was sent.
func echoUpstream(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Seen-User", r.Header.Get("X-Forwarded-User"))
		w.Header().Set("X-Seen-Groups", r.Header.Get("X-Forwarded-Groups"))
		w.Header().Set("X-Seen-Authorization", r.Header.Get("Authorization"))
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

func TestTokensInProxyAndForwardAuthModes(t *testing.T) {
	dir := tokenSetup(t)
	full := newToken(t, dir, "alice")
	ro := newToken(t, dir, "alice", "-read-only")
	up := echoUpstream(t)
	proxyAddr, _ := serveInProcess(t, t.TempDir(), strings.Replace(loginINI(dir, "[proxy]\nupstream = http://"+up+"\n"), "[backups]\ndir = "+dir+"/backups\n", "", 1), nil)
	req, _ := http.NewRequest("GET", "http://"+proxyAddr+"/app/page", nil)
	req.Header.Set("Authorization", "Bearer "+full)
	resp, err := testkit.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("X-Seen-User") != "alice" || resp.Header.Get("X-Seen-Groups") != "dba" || resp.Header.Get("X-Seen-Authorization") != "" {
		t.Fatalf("proxied: %d user %q groups %q authorization %q", resp.StatusCode, resp.Header.Get("X-Seen-User"), resp.Header.Get("X-Seen-Groups"), resp.Header.Get("X-Seen-Authorization"))
	}
	if got := bearer(t, "POST", "http://"+proxyAddr+"/app/page", ro, nil).StatusCode; got != 403 {
		t.Fatalf("read-only token POST through the proxy: %d, want 403", got)
	}

	fwdINI := strings.Replace(loginINI(dir, ""), "[server]\n", "[server]\nmode = forward-auth\ntrusted_proxies = 127.0.0.1\n", 1)
	fwdINI = strings.Replace(fwdINI, "[backups]\ndir = "+dir+"/backups\n", "", 1)
	fwdAddr, _ := serveInProcess(t, t.TempDir(), fwdINI, nil)
	ask := func(token, method string) *http.Response {
		return bearer(t, "GET", "http://"+fwdAddr+"/auth/forward", token, map[string]string{
			"X-Forwarded-Method": method, "X-Forwarded-Uri": "/app/x", "X-Forwarded-Host": "app.example", "X-Forwarded-Proto": "https"})
	}
	if r := ask(full, "GET"); r.StatusCode != 200 || r.Header.Get("X-Auth-Request-User") != "alice" {
		t.Fatalf("forward auth: %d user %q", r.StatusCode, r.Header.Get("X-Auth-Request-User"))
	}
	if got := ask(ro, "DELETE").StatusCode; got != 403 {
		t.Fatalf("forward auth, read-only token asked about DELETE: %d, want 403", got)
	}
	if got := ask(ro, "GET").StatusCode; got != 200 {
		t.Fatalf("forward auth, read-only token asked about GET: %d, want 200", got)
	}
}

// TestBadTokenIsRefusedNotRedirected: an altered, made-up, expired or
// revoked machine token gets 401 with WWW-Authenticate: Bearer
// error="invalid_token" on every route and in every mode, asked for a
// page (Accept: text/html) or for JSON: a script that sent a token never
// wants the login page.
func TestBadTokenIsRefusedNotRedirected(t *testing.T) {
	dir := tokenSetup(t)
	full := newToken(t, dir, "alice")
	expired := newToken(t, dir, "bob", "-expires", "1s")
	revoked := newToken(t, dir, "bob")
	users := filepath.Join(dir, "users")
	tok, st := tokens.Open(tokens.DefaultPath(users), nil, nil).Lookup(revoked)
	if st != tokens.Valid {
		t.Fatalf("lookup of the token to revoke: %v", st)
	}
	if code, _, stderr := runTokenCmd("revoke", "-file", users, tok.ID); code != exitOK {
		t.Fatalf("revoke: %d %s", code, stderr)
	}
	altered := full[:len(full)-1] + "A"
	if altered == full {
		altered = full[:len(full)-1] + "B"
	}
	bad := map[string]string{"altered": altered, "made up": "bwt_" + strings.Repeat("x", 43), "expired": expired, "revoked": revoked}
	lots := strings.Replace(loginINI(dir, ""), "max_failures = 3", "max_failures = 1000", 1)
	noBackups := "[backups]\ndir = " + dir + "/backups\n"
	up := echoUpstream(t)
	catalogAddr, _ := serveInProcess(t, t.TempDir(), lots, nil)
	proxyAddr, _ := serveInProcess(t, t.TempDir(), strings.Replace(lots, noBackups, "[proxy]\nupstream = http://"+up+"\n", 1), nil)
	fwd := strings.Replace(strings.Replace(lots, noBackups, "", 1), "[server]\n", "[server]\nmode = forward-auth\ntrusted_proxies = 127.0.0.1\n", 1)
	fwdAddr, _ := serveInProcess(t, t.TempDir(), fwd, nil)
	time.Sleep(1100 * time.Millisecond) // the expired token's second

	fwdHeaders := map[string]string{"X-Forwarded-Method": "GET", "X-Forwarded-Uri": "/app/x", "X-Forwarded-Host": "app.example", "X-Forwarded-Proto": "https",
		"X-Original-Method": "GET", "X-Original-URI": "/app/x", "X-Original-Host": "app.example"}
	targets := []struct{ name, url string }{
		{"catalog page", "http://" + catalogAddr + "/"},
		{"catalog folder", "http://" + catalogAddr + "/backups/"},
		{"catalog download", "http://" + catalogAddr + "/backups/db.sql"},
		{"catalog API", "http://" + catalogAddr + "/api/backups"},
		{"account page", "http://" + catalogAddr + "/_backupweb/account"},
		{"userinfo", "http://" + catalogAddr + "/_backupweb/userinfo"},
		{"proxied page", "http://" + proxyAddr + "/app/page"},
		{"forward auth", "http://" + fwdAddr + "/auth/forward"},
		{"auth request", "http://" + fwdAddr + "/auth/request"},
	}
	for _, tg := range targets {
		for kind, tok := range bad {
			for _, accept := range []string{"text/html,application/xhtml+xml", "application/json"} {
				hdr := map[string]string{"Accept": accept}
				if strings.HasPrefix(tg.name, "forward") || strings.HasPrefix(tg.name, "auth") {
					for k, v := range fwdHeaders {
						hdr[k] = v
					}
				}
				resp := bearer(t, "GET", tg.url, tok, hdr)
				if resp.StatusCode != 401 || resp.Header.Get("Location") != "" || resp.Header.Get("WWW-Authenticate") != `Bearer error="invalid_token"` {
					t.Errorf("%s, %s token, Accept %s: %d Location %q WWW-Authenticate %q; want 401 with a Bearer challenge",
						tg.name, kind, accept, resp.StatusCode, resp.Header.Get("Location"), resp.Header.Get("WWW-Authenticate"))
				}
			}
		}
	}
	// The right token still passes, as a page too.
	if got := bearer(t, "GET", "http://"+catalogAddr+"/", full, map[string]string{"Accept": "text/html"}).StatusCode; got != 200 {
		t.Fatalf("the right token, asking for a page: %d, want 200", got)
	}
}
