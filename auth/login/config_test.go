package login

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/backupweb/backupweb/auth"
	"github.com/backupweb/backupweb/auth/sessionauth"
	"github.com/backupweb/backupweb/internal/ini"
	"github.com/backupweb/backupweb/session"
)

func TestLoginPath(t *testing.T) {
	tests := []struct {
		view, want string
		ok         bool
	}{
		{"", "/login", true},
		{"login", "/login", true},
		{"  login  ", "/login", true},
		{"/login", "/login", true},
		{"/signin", "/signin", true},
		{"auth.login", "/auth.login", true},
		{"/account/sign-in", "/account/sign-in", true},
		{"/", "", false},
		{"/logout", "", false},
		{"logout", "", false},
		{"/healthz", "", false},
		{"/api", "", false},
		{"/api/login", "", false},
		{"/backups/login", "", false},
		{"/oauth/login", "", false},
		{"/login/", "", false},
		{"//evil", "", false},
		{"/a/../login", "", false},
		{"/log in", "", false},
		{"/login?x=1", "", false},
		{"/{name}", "", false},
		{"/login%2F", "", false},
		{"GET /login", "", false},
	}
	for _, tt := range tests {
		got, err := LoginPath(tt.view)
		if (err == nil) != tt.ok || tt.ok && got != tt.want {
			t.Errorf("LoginPath(%q) = %q, %v; want %q, ok=%v", tt.view, got, err, tt.want, tt.ok)
		}
	}
}

// loadSection parses an [authentication] section and runs Load on it.
func loadSection(t *testing.T, body string) (Config, bool, []ini.Problem) {
	t.Helper()
	rep := &ini.Report{}
	f := ini.Parse("backupweb.ini", strings.NewReader("[authentication]\ntype = flask-login\n"+body), rep)
	cfg, ok := Load(f.Section("authentication"))
	return cfg, ok, rep.Problems()
}

func TestLoadDefaults(t *testing.T) {
	dir := t.TempDir()
	users := filepath.Join(dir, "users")
	writeFile(t, users, usersText(t, "alice"))
	cfg, ok, problems := loadSection(t, "users_file = "+users+"\nuse_bcrypt = True\n")
	if !ok {
		t.Fatalf("Load refused: %v", problems)
	}
	want := Config{
		UsersFile: users, UseBcrypt: true, LoginPath: "/login",
		Settings:        sessionauth.Settings{IdleTimeout: 30 * time.Minute, Lifetime: 12 * time.Hour, MaxSessionsPerUser: 20},
		Throttling:      auth.Throttling{MaxFailures: 10, FailureWindow: 15 * time.Minute},
		MaxUserFailures: 5,
	}
	if cfg.read == nil || cfg.read.users == nil {
		t.Error("Load kept no reading of the user file for New")
	}
	if cfg.read = nil; cfg != want {
		t.Errorf("Load = %+v\nwant %+v", cfg, want)
	}
}

func TestLoadAllKeys(t *testing.T) {
	dir := t.TempDir()
	users := filepath.Join(dir, "users")
	writeFile(t, users, usersText(t, "alice"))
	tmpl := filepath.Join(dir, "login.html")
	if err := os.WriteFile(tmpl, []byte(customTemplate), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, ok, problems := loadSection(t, strings.Join([]string{
		"users_file = " + users, "use_bcrypt = yes", "login_view = /signin", "login_template = " + tmpl,
		"session_idle_timeout = 10m", "session_lifetime = 2h", "max_failures = 20",
		"max_user_failures = 3", "failure_window = 600", "max_sessions_per_user = 4",
		"attempt_wait = 3s",
		"idle_renewal = any",
	}, "\n"))
	if !ok {
		t.Fatalf("Load refused: %v", problems)
	}
	want := Config{
		UsersFile: users, UseBcrypt: true, LoginPath: "/signin", LoginTemplate: tmpl,
		Settings:        sessionauth.Settings{IdleTimeout: 10 * time.Minute, Lifetime: 2 * time.Hour, MaxSessionsPerUser: 4, IdleRenewal: session.RenewAny},
		Throttling:      auth.Throttling{MaxFailures: 20, FailureWindow: 10 * time.Minute, AttemptWait: 3 * time.Second},
		MaxUserFailures: 3,
	}
	if cfg.read == nil || cfg.read.users == nil {
		t.Error("Load kept no reading of the user file for New")
	}
	if cfg.read = nil; cfg != want {
		t.Errorf("Load = %+v\nwant %+v", cfg, want)
	}
}

func TestLoadProblems(t *testing.T) {
	dir := t.TempDir()
	const secretLine = "carol-Plain-Secret"
	write := func(name, text string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good", usersText(t, "alice"), 0o600)
	salt := hashOf(t, testPasswords["alice"])[7:29]
	malformed := write("malformed", usersText(t, "alice")+secretLine+"\n", 0o600)
	duplicate := write("duplicate", usersText(t, "alice", "alice"), 0o600)
	apr1 := write("apr1", "alice:$apr1$"+secretLine+"\n", 0o600)
	plainInBcrypt := write("plain", "carol:"+secretLine+"\n", 0o600)
	empty := write("empty", "# nobody yet\n", 0o600)
	open := write("open", usersText(t, "alice"), 0o644)
	tests := []struct {
		name     string
		body     string
		ok       bool
		severity ini.Severity
		where    string // "FILE:LINE", "FILE" or "backupweb.ini:LINE"
		msg      string
	}{
		{"missing key", "use_bcrypt = true", false, ini.Error, "backupweb.ini:1", "users_file: missing required key"},
		{"missing file", "users_file = " + filepath.Join(dir, "nope"), false, ini.Error, "backupweb.ini:3", "no such file"},
		{"malformed line", "users_file = " + malformed + "\nuse_bcrypt = true", false, ini.Error, malformed + ":4", "malformed line"},
		{"duplicate user", "users_file = " + duplicate + "\nuse_bcrypt = true", false, ini.Error, duplicate + ":4", "duplicate user name"},
		{"other hash kind", "users_file = " + apr1 + "\nuse_bcrypt = true", false, ini.Error, apr1 + ":1", "$apr1$"},
		{"plain value with bcrypt", "users_file = " + plainInBcrypt + "\nuse_bcrypt = true", false, ini.Error, plainInBcrypt + ":1", "not a hash"},
		{"empty file", "users_file = " + empty + "\nuse_bcrypt = true", false, ini.Error, empty, "no users"},
		{"plain passwords", "users_file = " + plainInBcrypt, true, ini.Warning, "backupweb.ini", "passwords are stored in plain text"},
		{"bcrypt hash with bcrypt off", "users_file = " + good, false, ini.Error, good + ":3", "use_bcrypt is off, so the hash itself would be accepted"},
		{"readable by others", "users_file = " + open + "\nuse_bcrypt = true", true, ini.Warning, open, "chmod 600"},
		{"weak cost", "users_file = " + good + "\nuse_bcrypt = true", true, ini.Warning, good + ":3", "bcrypt cost 4 is weak"},
		{"idle longer than lifetime", "users_file = " + good + "\nuse_bcrypt = true\nsession_idle_timeout = 2h\nsession_lifetime = 1h", true, ini.Warning, "backupweb.ini:5", "longer than session_lifetime"},
		{"bad duration", "users_file = " + good + "\nuse_bcrypt = true\nfailure_window = soon", false, ini.Error, "backupweb.ini:5", "failure_window"},
		{"attempt_wait too long", "users_file = " + good + "\nuse_bcrypt = true\nattempt_wait = 30s", false, ini.Error, "backupweb.ini:5", "attempt_wait: must be at most 25s"},
		{"bad number", "users_file = " + good + "\nuse_bcrypt = true\nmax_user_failures = 0", false, ini.Error, "backupweb.ini:5", "max_user_failures"},
		{"bad idle renewal", "users_file = " + good + "\nuse_bcrypt = true\nidle_renewal = always", false, ini.Error, "backupweb.ini:5", "idle_renewal: unknown value \"always\"; valid values are navigation"},
		{"bad login view", "users_file = " + good + "\nuse_bcrypt = true\nlogin_view = /api/x", false, ini.Error, "backupweb.ini:5", "login_view"},
		{"missing template", "users_file = " + good + "\nuse_bcrypt = true\nlogin_template = " + filepath.Join(dir, "none.html"), false, ini.Error, "backupweb.ini:5", "login_template"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, ok, problems := loadSection(t, tt.body)
			if ok != tt.ok {
				t.Errorf("ok = %v, want %v; problems: %v", ok, tt.ok, problems)
			}
			found := false
			for _, p := range problems {
				s := p.String()
				if strings.Contains(s, secretLine) || strings.Contains(s, salt) {
					t.Errorf("problem repeats file content: %s", s)
				}
				if p.Severity == tt.severity && strings.Contains(s, tt.where+":") && strings.Contains(s, tt.msg) {
					found = true
				}
			}
			if !found {
				t.Errorf("no %s at %s mentioning %q in %v", tt.severity, tt.where, tt.msg, problems)
			}
		})
	}
}

func TestNewErrors(t *testing.T) {
	dir := t.TempDir()
	users := filepath.Join(dir, "users")
	writeFile(t, users, usersText(t, "alice"))
	env := auth.Deps{SecretKey: testSecret, StateDir: filepath.Join(dir, "state")}
	tests := []struct {
		name string
		cfg  Config
		env  auth.Deps
	}{
		{"missing users file", Config{UsersFile: filepath.Join(dir, "nope")}, env},
		{"no secret", Config{UsersFile: users, UseBcrypt: true}, auth.Deps{StateDir: env.StateDir}},
		{"no state dir", Config{UsersFile: users, UseBcrypt: true}, auth.Deps{SecretKey: testSecret}},
		{"bad login path", Config{UsersFile: users, UseBcrypt: true, LoginPath: "/api/x"}, env},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := New(tt.cfg, tt.env)
			if err == nil {
				p.Close()
				t.Fatal("New succeeded")
			}
			if !strings.HasPrefix(err.Error(), "login: ") {
				t.Errorf("error %q lacks the package prefix", err)
			}
		})
	}
}

func TestWatchEndsWithItsContext(t *testing.T) {
	dir := t.TempDir()
	users := filepath.Join(dir, "users")
	writeFile(t, users, usersText(t, "alice"))
	p, err := New(Config{UsersFile: users, UseBcrypt: true, PollInterval: time.Millisecond}, auth.Deps{SecretKey: testSecret, StateDir: filepath.Join(dir, "state")})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { p.Watch(ctx); close(done) }()
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Watch did not return when its context ended")
	}
}

// TestValidate: New refuses what Load refuses, naming the key.
func TestValidate(t *testing.T) {
	for _, tt := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"no user file", Config{}, "users_file: missing required key"},
		{"login path of the program", Config{UsersFile: "/x", LoginPath: "/api/login"}, "login_view: paths under /api/"},
		{"login path with dots", Config{UsersFile: "/x", LoginPath: "/a/../b"}, "login_view: must be a plain path"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.cfg.Validate(); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Validate = %v, want %q", err, tt.want)
			}
			if _, err := New(tt.cfg, auth.Deps{SecretKey: testSecret, StateDir: t.TempDir()}); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("New = %v, want %q", err, tt.want)
			}
		})
	}
}
