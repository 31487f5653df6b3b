package login

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/testkit/loginfix"
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

// TestReadKeepsFiles: what ReadUsers and ReadTemplate read is kept for
// New, which does not read the files a second time.
func TestReadKeepsFiles(t *testing.T) {
	dir := t.TempDir()
	users := filepath.Join(dir, "users")
	loginfix.WriteFile(t, users, loginfix.UsersText(t, "alice"))
	tmpl := filepath.Join(dir, "login.html")
	if err := os.WriteFile(tmpl, []byte(customTemplate), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := Config{UsersFile: users, UseBcrypt: true, LoginTemplate: tmpl}
	if problems := cfg.ReadTemplate(); problems != nil {
		t.Fatalf("ReadTemplate: %v", problems)
	}
	if read, problems := cfg.ReadUsers(); !read {
		t.Fatalf("ReadUsers: %v", problems)
	}
	if cfg.read == nil || cfg.read.users == nil || cfg.read.tmpl == nil {
		t.Error("ReadUsers and ReadTemplate kept no reading for New")
	}
}

func TestNewErrors(t *testing.T) {
	dir := t.TempDir()
	users := filepath.Join(dir, "users")
	loginfix.WriteFile(t, users, loginfix.UsersText(t, "alice"))
	env := auth.Deps{SecretKey: loginfix.Secret, StateDir: filepath.Join(dir, "state")}
	tests := []struct {
		name string
		cfg  Config
		env  auth.Deps
	}{
		{"missing users file", Config{UsersFile: filepath.Join(dir, "nope")}, env},
		{"no secret", Config{UsersFile: users, UseBcrypt: true}, auth.Deps{StateDir: env.StateDir}},
		{"no state dir", Config{UsersFile: users, UseBcrypt: true}, auth.Deps{SecretKey: loginfix.Secret}},
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
	loginfix.WriteFile(t, users, loginfix.UsersText(t, "alice"))
	p, err := New(Config{UsersFile: users, UseBcrypt: true, PollInterval: time.Millisecond}, auth.Deps{SecretKey: loginfix.Secret, StateDir: filepath.Join(dir, "state")})
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
			if _, err := New(tt.cfg, auth.Deps{SecretKey: loginfix.Secret, StateDir: t.TempDir()}); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("New = %v, want %q", err, tt.want)
			}
		})
	}
}
