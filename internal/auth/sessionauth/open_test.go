package sessionauth

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/session"
)

var testKey = []byte(strings.Repeat("k", 32))

func TestOpen(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	tests := []struct {
		name     string
		env      auth.Deps
		wantErr  string
		wantFile bool
	}{
		{"file store", auth.Deps{StateDir: dir, SecretKey: testKey}, "", true},
		{"no state dir", auth.Deps{SecretKey: testKey}, "state_dir", false},
		{"short key", auth.Deps{StateDir: dir + "-short", SecretKey: []byte("short")}, "gen-secret", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := OpenSessions(tt.env, "flask-login", Settings{IdleTimeout: time.Minute, Lifetime: time.Hour})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one mentioning %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			_, statErr := os.Stat(filepath.Join(tt.env.StateDir, session.FileName))
			if (statErr == nil) != tt.wantFile {
				t.Errorf("session file exists = %v, want %v", statErr == nil, tt.wantFile)
			}
		})
	}
}

func TestLogoutRedirect(t *testing.T) {
	for _, tt := range []struct{ redirect, want string }{{"", "/login?signed_out=1"}, {"/signed-out", "/signed-out"}} {
		s, err := OpenSessions(auth.Deps{SecretKey: testKey, StateDir: t.TempDir()}, "flask-login", Settings{IdleTimeout: time.Minute, Lifetime: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		g := New(Options{Type: "t", Manager: s.Manager, LoginPath: "/login", LogoutRedirect: tt.redirect})
		rec := httptest.NewRecorder()
		if _, err := s.Start(rec, httptest.NewRequest("POST", "/login", nil), session.Data{Username: "u"}); err != nil {
			t.Fatal(err)
		}
		r := httptest.NewRequest("POST", LogoutPath, nil)
		for _, c := range rec.Result().Cookies() {
			r.AddCookie(c)
		}
		sess, ok, err := s.Load(r)
		if !ok || err != nil {
			t.Fatalf("session not loaded: %v", err)
		}
		r.Header.Set(CSRFHeader, s.CSRFToken(sess))
		out := httptest.NewRecorder()
		g.Logout(out, r)
		if out.Code != http.StatusSeeOther || out.Header().Get("Location") != tt.want {
			t.Errorf("LogoutRedirect %q: %d %q, want 303 %q", tt.redirect, out.Code, out.Header().Get("Location"), tt.want)
		}
	}
}

func TestOpenWarnsWhenTheKeyChanged(t *testing.T) {
	dir := t.TempDir()
	var logs strings.Builder
	env := auth.Deps{StateDir: dir, SecretKey: testKey, Logger: slog.New(slog.NewTextHandler(&logs, nil))}
	open := func(key []byte) {
		t.Helper()
		env.SecretKey = key
		s, err := OpenSessions(env, "flask-login", Settings{IdleTimeout: time.Minute, Lifetime: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		s.Close()
	}
	open(testKey)
	open(testKey)
	if strings.Contains(logs.String(), "another BACKUP_SECRET_KEY") {
		t.Fatalf("warned with the same key:\n%s", logs.String())
	}
	data, err := os.ReadFile(filepath.Join(dir, KeyCheckFile))
	if err != nil || strings.Contains(string(data), string(testKey)) {
		t.Fatalf("key check file: %q, %v (it must hold a fingerprint, never the key)", data, err)
	}
	open([]byte(strings.Repeat("n", 32)))
	if n := strings.Count(logs.String(), "another BACKUP_SECRET_KEY"); n != 1 {
		t.Fatalf("want one warning after the key changed, got %d:\n%s", n, logs.String())
	}
	open([]byte(strings.Repeat("n", 32)))
	if n := strings.Count(logs.String(), "another BACKUP_SECRET_KEY"); n != 1 {
		t.Fatalf("the warning must not repeat once the new key is recorded, got %d", n)
	}
}
