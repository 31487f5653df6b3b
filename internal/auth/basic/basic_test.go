package basic_test

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/backupweb/backupweb/internal/app"
	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/auth/basic"
	"github.com/backupweb/backupweb/internal/catalog"
	"github.com/backupweb/backupweb/internal/config"
	"github.com/backupweb/backupweb/internal/ini"
	"github.com/backupweb/backupweb/internal/peer"
	"github.com/backupweb/backupweb/internal/testkit"
	"github.com/backupweb/backupweb/internal/testkit/logtest"
	"github.com/backupweb/backupweb/internal/web"
)

// Real hashes from other producers, see ../../password/testdata/README.md.
const (
	pythonPassword  = "s3cret-Backup!"
	htpasswdUser    = "alice"
	htpasswdPasword = "correct horse battery staple"
)

func readHash(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "internal", "password", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	line := strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[0])
	if i := strings.LastIndex(line, ":"); i >= 0 {
		line = line[i+1:]
	}
	return line
}

type testServer struct {
	*httptest.Server
	logs *logtest.Buffer
	cfg  *config.Config
	p    auth.Provider
	work *checkCounter // the bcrypt work done for the requests
}

// start writes ini to a file, loads it as the program does, builds the
// provider through the program's table of types and serves the real handler on loopback.
func start(t *testing.T, ini string, env map[string]string) *testServer {
	t.Helper()
	return startEnv(t, ini, env, auth.Deps{})
}

// startEnv is start with the provider's environment given (a clock).
func startEnv(t *testing.T, ini string, env map[string]string, aenv auth.Deps) *testServer {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "backupweb.ini")
	if err := os.WriteFile(path, []byte(ini), 0o600); err != nil {
		t.Fatal(err)
	}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	cfg := config.Load(path, lookup)
	logs := &logtest.Buffer{}
	log := slog.New(slog.NewTextHandler(logs, nil))
	aenv.Logger = log
	work := &checkCounter{}
	aenv.Hooks.Password = work
	p, err := app.NewProvider(cfg.Auth, aenv, lookup)
	if err != nil || cfg.Report.HasErrors() {
		t.Fatalf("configuration refused: %v\n%v", err, cfg.Report.Err())
	}
	backups := filepath.Join(dir, "backups")
	os.Mkdir(backups, 0o700)
	os.WriteFile(filepath.Join(backups, "db.tar.gz"), []byte("data"), 0o600)
	h := web.NewHandler(web.Options{Provider: p, Catalog: catalog.New(backups), Resolver: peer.NewResolver(cfg.Server.TrustedProxies), Logger: log})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &testServer{Server: srv, logs: logs, cfg: cfg, p: p, work: work}
}

func (s *testServer) get(t *testing.T, path string, mod func(*http.Request)) *http.Response {
	t.Helper()
	req, _ := http.NewRequest("GET", s.URL+path, nil)
	if mod != nil {
		mod(req)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func basicAuth(user, pw string) func(*http.Request) {
	return func(r *http.Request) { r.SetBasicAuth(user, pw) }
}

func TestHashesFromOtherProducersEndToEnd(t *testing.T) {
	pyHash := readHash(t, "python-2b.txt")
	apacheHash := readHash(t, "htpasswd-2y.txt")
	tests := []struct {
		name     string
		ini      string
		env      map[string]string
		user, pw string
	}{
		{"inline $2b$ hash written in the file", "[authentication]\ntype = basic\nusername = api\npassword = " + pyHash + "\nuse_bcrypt = True\n",
			nil, "api", pythonPassword},
		{"${NAME} holding a $2y$ hash", "[authentication]\ntype = basic\nusername = ${BASIC_USER}\npassword = ${BASIC_HASH}\nuse_bcrypt = yes\n",
			map[string]string{"BASIC_USER": htpasswdUser, "BASIC_HASH": apacheHash}, htpasswdUser, htpasswdPasword},
		{"plain password", "[authentication]\ntype = basic\nusername = api\npassword = plain pass # not a comment\n",
			nil, "api", "plain pass # not a comment"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := start(t, tt.ini, tt.env)
			cases := []struct {
				name string
				mod  func(*http.Request)
				want int
			}{
				{"right", basicAuth(tt.user, tt.pw), 200},
				{"right again (cached)", basicAuth(tt.user, tt.pw), 200},
				{"wrong password", basicAuth(tt.user, tt.pw+"x"), 401},
				{"wrong user", basicAuth(tt.user+"x", tt.pw), 401},
				{"missing", nil, 401},
				{"malformed", func(r *http.Request) { r.Header.Set("Authorization", "Basic %%%") }, 401},
				{"other scheme", func(r *http.Request) { r.Header.Set("Authorization", "Bearer abc") }, 401},
			}
			for _, c := range cases {
				resp := s.get(t, "/api/backups", c.mod)
				if resp.StatusCode != c.want {
					t.Errorf("%s: status %d, want %d", c.name, resp.StatusCode, c.want)
				}
				if c.want == 200 {
					var body struct{ Backups []map[string]any }
					if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || len(body.Backups) != 1 {
						t.Errorf("%s: body %v, %v", c.name, body, err)
					}
				}
				if c.want == 401 {
					if got := resp.Header.Get("WWW-Authenticate"); got != `Basic realm="backupweb"` {
						t.Errorf("%s: WWW-Authenticate %q", c.name, got)
					}
				}
			}
			if strings.Contains(s.logs.String(), tt.pw) {
				t.Error("a password reached the log")
			}
		})
	}
}

func TestRealm(t *testing.T) {
	tests := []struct{ realm, want string }{
		{"", `Basic realm="backupweb"`},
		{"realm = Backup Service\n", `Basic realm="Backup Service"`},
		{`realm = say "hi" \ there` + "\n", `Basic realm="say \"hi\" \\ there"`},
	}
	for _, tt := range tests {
		s := start(t, "[authentication]\ntype = basic\nusername = u\npassword = p\n"+tt.realm, nil)
		if got := s.get(t, "/", nil).Header.Get("WWW-Authenticate"); got != tt.want {
			t.Errorf("realm %q: WWW-Authenticate %q, want %q", tt.realm, got, tt.want)
		}
	}
}

func TestRefusalLogs(t *testing.T) {
	hash := readHash(t, "python-2b.txt")
	ini := "[server]\ntrusted_proxies = 127.0.0.1\n[authentication]\ntype = basic\nusername = api\npassword = " + hash + "\nuse_bcrypt = true\n"
	s := start(t, ini, nil)

	s.get(t, "/api/me", func(r *http.Request) {
		r.SetBasicAuth("api", "guess-one")
		r.Header.Set("X-Forwarded-For", "203.0.113.9")
	})
	s.get(t, "/api/me", basicAuth("eve\ntime=2026 level=INFO msg=ok", "guess-two"))
	logs := s.logs.String()
	lines := strings.Split(strings.TrimSpace(logs), "\n")
	if len(lines) != 2 {
		t.Fatalf("want 2 log lines, got %d:\n%s", len(lines), logs)
	}
	for _, want := range []string{"auth", "auth_type=basic", "client=203.0.113.9", "user=api", "level=WARN", `reason="bad credentials"`} {
		if !strings.Contains(lines[0], want) {
			t.Errorf("line %q lacks %q", lines[0], want)
		}
	}
	if !strings.Contains(lines[1], "client=127.0.0.1") || !strings.Contains(lines[1], `eve\ntime`) {
		t.Errorf("second line %q: want loopback client and an escaped user name", lines[1])
	}
	for _, secret := range []string{"guess-one", "guess-two", hash, hash[7:]} {
		if strings.Contains(logs, secret) {
			t.Errorf("log holds a secret %q", secret)
		}
	}
}

func TestForwardingHeadersFromUntrustedPeerIgnored(t *testing.T) {
	s := start(t, "[authentication]\ntype = basic\nusername = api\npassword = pw\n", nil)
	s.get(t, "/api/me", func(r *http.Request) {
		r.SetBasicAuth("api", "wrong")
		r.Header.Set("X-Forwarded-For", "203.0.113.9")
		r.Header.Set("X-Real-IP", "203.0.113.10")
	})
	if logs := s.logs.String(); !strings.Contains(logs, "client=127.0.0.1") || strings.Contains(logs, "203.0.113") {
		t.Errorf("untrusted forwarding headers were believed: %s", logs)
	}
}

func TestPasswordLongerThan72Bytes(t *testing.T) {
	pw72 := strings.Repeat("p", 72)
	h := []byte(testkit.Hash(t, pw72))
	s := start(t, "[authentication]\ntype = basic\nusername = api\npassword = "+string(h)+"\nuse_bcrypt = true\n", nil)
	if got := s.get(t, "/api/me", basicAuth("api", pw72)).StatusCode; got != 200 {
		t.Fatalf("72-byte password: %d", got)
	}
	if got := s.get(t, "/api/me", basicAuth("api", pw72+"extra")).StatusCode; got != 401 {
		t.Fatalf("password matching only on its first 72 bytes was admitted: %d", got)
	}
	if !strings.Contains(s.logs.String(), "longer than 72 bytes") {
		t.Errorf("refusal reason not logged: %s", s.logs.String())
	}
}

func TestThrottlePerAddress(t *testing.T) {
	ini := "[server]\ntrusted_proxies = 127.0.0.1\n[authentication]\ntype = basic\nusername = api\npassword = pw\nmax_failures = 3\nfailure_window = 10m\n"
	s := start(t, ini, nil)
	from := func(ip, user, pw string) func(*http.Request) {
		return func(r *http.Request) { r.SetBasicAuth(user, pw); r.Header.Set("X-Forwarded-For", ip) }
	}
	for i := range 3 {
		if got := s.get(t, "/api/me", from("198.51.100.1", "api", "wrong")).StatusCode; got != 401 {
			t.Fatalf("failure %d: status %d", i, got)
		}
	}
	resp := s.get(t, "/api/me", from("198.51.100.1", "api", "pw"))
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("throttled address: status %d Retry-After %q", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	if got := s.get(t, "/api/me", from("198.51.100.2", "api", "pw")).StatusCode; got != 200 {
		t.Fatalf("another address was refused: %d", got)
	}
	if !strings.Contains(s.logs.String(), `reason="too many failures"`) {
		t.Error("throttled attempt not logged")
	}
}

func TestConfigProblems(t *testing.T) {
	pyHash := readHash(t, "python-2b.txt")
	tests := []struct {
		name       string
		ini        string
		wantErr    string
		wantWarn   string
		mustNotSay string
	}{
		{"missing username", "[authentication]\ntype = basic\npassword = x\n", "username: missing required key", "", ""},
		{"missing password", "[authentication]\ntype = basic\nusername = x\n", "password: missing required key", "", ""},
		{"bad hash", "[authentication]\ntype = basic\nusername = u\npassword = $2b$12$tooShort\nuse_bcrypt = true\n", "password", "", "tooShort"},
		{"plain password", "[authentication]\ntype = basic\nusername = u\npassword = hunter2\n", "", "plain text", "hunter2"},
		{"hash without use_bcrypt", "[authentication]\ntype = basic\nusername = u\npassword = " + pyHash + "\n", "set use_bcrypt = True", "", pyHash},
		{"misspelt use_bcrypt", "[authentication]\ntype = basic\nusername = u\npassword = " + pyHash + "\nuse_bycrypt = true\n", "use_bycrypt: unknown key; did you mean use_bcrypt?", "", pyHash},
		{"inline comment after hash", "[authentication]\ntype = basic\nusername = u\npassword = " + pyHash + " # made by hash-password\nuse_bcrypt = true\n", "looks like an inline comment", "", pyHash},
		{"inline comment after plain password", "[authentication]\ntype = basic\nusername = u\npassword = hunter2 ; old\n", "", "looks like an inline comment", "hunter2"},
		{"bad boolean", "[authentication]\ntype = basic\nusername = u\npassword = p\nuse_bcrypt = maybe\n", "use_bcrypt", "", ""},
		{"unknown type", "[authentication]\ntype = kerberos\n", "none, basic", "", ""},
		{"unknown key", "[authentication]\ntype = basic\nusername = u\npassword = p\ncolour = blue\n", "", "colour: unknown key", ""},
		{"key of another type", "[authentication]\ntype = basic\nusername = u\npassword = p\nusers_file = x\n", "", "users_file: is not used by authentication type basic", ""},
		{"control character in realm", "[authentication]\ntype = basic\nusername = u\npassword = p\nrealm = a\x01b\n", "realm", "", ""},
		{"attempt_wait too long", "[authentication]\ntype = basic\nusername = u\npassword = p\nattempt_wait = 1m\n", "attempt_wait: must be at most 25s", "", ""},
		{"attempt_wait not a duration", "[authentication]\ntype = basic\nusername = u\npassword = p\nattempt_wait = soon\n", "attempt_wait", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "c.ini")
			os.WriteFile(path, []byte(tt.ini), 0o600)
			cfg := config.Load(path, func(string) (string, bool) { return "", false })
			_, err := app.NewProvider(cfg.Auth, auth.Deps{}, func(string) (string, bool) { return "", false })
			var errs, warns []string
			for _, p := range cfg.Report.Problems() {
				if p.Severity == ini.Error {
					errs = append(errs, p.String())
				} else {
					warns = append(warns, p.String())
				}
			}
			all := strings.Join(append(errs, warns...), "\n")
			if tt.wantErr != "" && (err == nil || !strings.Contains(strings.Join(errs, "\n"), tt.wantErr)) {
				t.Errorf("want an error mentioning %q, got err=%v problems:\n%s", tt.wantErr, err, all)
			}
			if tt.wantErr == "" && err != nil {
				t.Errorf("unexpected error: %v\n%s", err, all)
			}
			if tt.wantWarn != "" && !strings.Contains(strings.Join(warns, "\n"), tt.wantWarn) {
				t.Errorf("want a warning mentioning %q, got:\n%s", tt.wantWarn, all)
			}
			if tt.mustNotSay != "" && strings.Contains(all, tt.mustNotSay) {
				t.Errorf("a problem echoes the secret %q:\n%s", tt.mustNotSay, all)
			}
			if strings.Contains(all, "c.ini:") == false && len(all) > 0 {
				t.Errorf("problems do not name the file:\n%s", all)
			}
		})
	}
}

// TestNewValidates: a configuration Load would refuse is refused by New
// too, with the key named and the value never echoed.
func TestNewValidates(t *testing.T) {
	hash := "$2b$04$QgwesizPF/ILU2ywZHluzeOcByhJ/ciBI5k5Gz23smBRZEf87h1pG"
	tests := []struct {
		name string
		cfg  basic.Config
		want string // "" when valid
	}{
		{"valid", basic.Config{Username: "u", Password: hash, UseBcrypt: true}, ""},
		{"plain password", basic.Config{Username: "u", Password: "hunter2-long"}, ""},
		{"no user", basic.Config{Password: hash, UseBcrypt: true}, "username: missing required key"},
		{"no password", basic.Config{Username: "u", UseBcrypt: true}, "password: missing required key"},
		{"plain value with bcrypt on", basic.Config{Username: "u", Password: "hunter2-long", UseBcrypt: true}, "password: password: not a bcrypt hash"},
		{"hash with bcrypt off", basic.Config{Username: "u", Password: hash}, "password: is a bcrypt hash but use_bcrypt is off"},
		{"realm with a newline", basic.Config{Username: "u", Password: hash, UseBcrypt: true, Realm: "a\nb"}, "realm: must not contain control characters"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := basic.New(tt.cfg, auth.Deps{})
			if tt.want == "" {
				if err != nil || p == nil {
					t.Fatalf("New = %v, %v", p, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("New error %v, want one containing %q", err, tt.want)
			}
			var ke *auth.KeyError
			if !errors.As(err, &ke) {
				t.Errorf("%v is not a *auth.KeyError", err)
			}
			if strings.Contains(err.Error(), "hunter2") || strings.Contains(err.Error(), hash) {
				t.Errorf("error %q echoes the password", err)
			}
		})
	}
}
