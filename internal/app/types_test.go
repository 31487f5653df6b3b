package app

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/config"
	"github.com/backupweb/backupweb/internal/ini"
)

func load(t *testing.T, text string) *config.Config {
	t.Helper()
	f := ini.Parse("test.ini", strings.NewReader(text), nil)
	f.Expand(func(string) (string, bool) { return "", false })
	return &config.Config{File: f, Auth: f.Section(Section), Report: f.Report()}
}

func TestNew(t *testing.T) {
	env := auth.Deps{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), StateDir: t.TempDir()}
	tests := []struct {
		name, ini string
		secret    string
		wantType  string // "" when New must fail
		want      string // a problem that must be reported
	}{
		{"no section means none", "", "", "none", ""},
		{"explicit none", "[authentication]\ntype = none\n", "", "none", ""},
		{"alias", "[authentication]\ntype = LOGIN\nusers_file = /nonexistent\n", strings.Repeat("k", 32), "", "users_file"},
		{"unknown type lists the valid ones", "[authentication]\ntype = ldap\n", "", "", "valid types are none, basic, flask-login, oauth"},
		{"section without type", "[authentication]\nusername = u\n", "", "", "has no type key"},
		{"near-miss key", "[authentication]\ntype = basic\nusername = u\npassword = p\nuser_name = x\n", "", "", "did you mean username?"},
		{"unknown key warns", "[authentication]\ntype = basic\nusername = u\npassword = p\ncolour = blue\n", "", "basic", "colour: unknown key; it is ignored"},
		{"key of another type warns", "[authentication]\ntype = basic\nusername = u\npassword = p\nusers_file = x\n", "", "basic", "is not used by authentication type basic"},
		{"second factor with basic", "[authentication]\ntype = basic\nusername = u\npassword = p\nsecond_factor = required\n", "", "", "second_factor: applies to authentication type flask-login only"},
		{"second factor off with basic", "[authentication]\ntype = basic\nusername = u\npassword = p\nsecond_factor = off\n", "", "basic", ""},
		{"second factor with oauth", "[authentication]\ntype = oauth\nsecond_factor = optional\n", strings.Repeat("k", 32), "", "applies to authentication type flask-login only"},
		{"secret missing", "[authentication]\ntype = oauth\n", "", "", "BACKUP_SECRET_KEY; make one with `backupweb gen-secret`"},
		{"secret too short", "[authentication]\ntype = flask-login\n", "short", "", "shorter than 32 characters"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := load(t, tt.ini)
			lookup := func(k string) (string, bool) { return tt.secret, k == SecretEnv && tt.secret != "" }
			p, err := NewProvider(cfg.Auth, env, lookup)
			if tt.wantType == "" {
				if err == nil {
					t.Fatalf("New accepted it as %s", p.Type())
				}
			} else if err != nil || p.Type() != tt.wantType {
				t.Fatalf("New: %v, %v; want type %s\n%v", p, err, tt.wantType, cfg.Report.Problems())
			}
			if tt.want != "" && !strings.Contains(strings.Join(problemStrings(cfg.Report), "\n"), tt.want) {
				t.Errorf("no problem mentioning %q:\n%v", tt.want, cfg.Report.Problems())
			}
			if c, ok := p.(io.Closer); ok {
				c.Close()
			}
			// Check (check-config) reaches the same verdict and the same
			// problems, building nothing.
			checked := load(t, tt.ini)
			typ, err := CheckProvider(checked.Auth, lookup)
			if (err == nil) != (tt.wantType != "") || err == nil && typ.Name != tt.wantType {
				t.Errorf("Check: %v, %v; want type %q", typ.Name, err, tt.wantType)
			}
			if got, want := problemStrings(checked.Report), problemStrings(cfg.Report); strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("Check found %v, New found %v", got, want)
			}
		})
	}
}

func TestCheckPlacement(t *testing.T) {
	for _, tt := range []struct{ ini, want string }{
		{"[backups]\ndir = x\n#[authentication]\ntype = basic\n", "[backups] type: is an [authentication] key but it is in [backups]"},
		{"[DEFAULT]\npassword = p\n", "[DEFAULT] password: is an [authentication] key"},
		{"[server]\nlisten = 127.0.0.1:1\n[backups]\ndir = x\n", ""},
		{"[DEFAULT]\ntype = basic\n[authentication]\nusername = u\n", ""}, // inherited by [authentication]: allowed
	} {
		cfg := load(t, tt.ini)
		CheckPlacement(cfg.File, config.SectionKeys())
		got := strings.Join(problemStrings(cfg.Report), "\n")
		if tt.want == "" && got != "" || !strings.Contains(got, tt.want) {
			t.Errorf("%q: problems %q, want %q", tt.ini, got, tt.want)
		}
	}
}

func TestLookupAndNames(t *testing.T) {
	if got := strings.Join(Names(), ","); got != "none,basic,flask-login,oauth" {
		t.Errorf("Names = %s", got)
	}
	for name, want := range map[string]string{"basic": "basic", "Flask-Login": "flask-login", "login": "flask-login", "OAUTH": "oauth"} {
		if typ, ok := Lookup(name); !ok || typ.Name != want {
			t.Errorf("Lookup(%q) = %v, %v", name, typ.Name, ok)
		}
	}
	if _, ok := Lookup("kerberos"); ok {
		t.Error("Lookup found an unknown type")
	}
}

func problemStrings(rep *ini.Report) []string {
	var out []string
	for _, p := range rep.Problems() {
		out = append(out, p.String())
	}
	return out
}

// TestCheckSecretsFollowsTheTable: the keys the table marks as secrets,
// written in a file others may read, draw the warning; other keys do not.
func TestCheckSecretsFollowsTheTable(t *testing.T) {
	for _, typ := range Types() {
		for key, what := range typ.Secrets() {
			t.Run(typ.Name+"/"+key, func(t *testing.T) {
				path := filepath.Join(t.TempDir(), "backupweb.ini")
				os.WriteFile(path, []byte("[authentication]\ntype = "+typ.Name+"\n"+key+" = written-here\nrealm = not-a-secret\n"), 0o644)
				cfg := Check(path, Options{LookupEnv: func(string) (string, bool) { return "", false }}).Config
				got := strings.Join(problemStrings(cfg.Report), "\n")
				if !strings.Contains(got, "holds "+what) || strings.Contains(got, "written-here") {
					t.Errorf("problems %q, want a warning that the file holds %s, without the value", got, what)
				}
			})
		}
	}
}
