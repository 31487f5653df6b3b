package login_test

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/backupweb/backupweb/internal/app"
	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/auth/login"
	"github.com/backupweb/backupweb/internal/ini"
	"github.com/backupweb/backupweb/internal/testkit"
)

// TestFactory builds the type through the program's table of types, by
// its name and its alias, and checks the secret key is required.
func TestFactory(t *testing.T) {
	dir := t.TempDir()
	users := filepath.Join(dir, "users")
	h := testkit.Hash(t, "pw")
	if err := os.WriteFile(users, []byte("alice:"+h+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	secret := strings.Repeat("ab", 32)
	tests := []struct {
		name, typ string
		env       map[string]string
		ok        bool
		msg       string
	}{
		{"by name", "flask-login", map[string]string{app.SecretEnv: secret}, true, ""},
		{"by alias", "login", map[string]string{app.SecretEnv: secret}, true, ""},
		{"no secret", "flask-login", nil, false, "gen-secret"},
		{"short secret", "flask-login", map[string]string{app.SecretEnv: "short"}, false, "gen-secret"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := &ini.Report{}
			text := "[authentication]\ntype = " + tt.typ + "\nusers_file = " + users + "\nuse_bcrypt = true\n"
			s := ini.Parse("backupweb.ini", strings.NewReader(text), rep).Section("authentication")
			lookup := func(k string) (string, bool) { v, ok := tt.env[k]; return v, ok }
			env := auth.Deps{StateDir: filepath.Join(dir, "state-"+strings.ReplaceAll(tt.name, " ", "-"))}
			p, err := app.NewProvider(s, env, lookup)
			if (err == nil) != tt.ok {
				t.Fatalf("app.New: %v; problems %v", err, rep.Problems())
			}
			if !tt.ok {
				if !strings.Contains(rep.Err().Error(), tt.msg) {
					t.Errorf("problems %v lack %q", rep.Problems(), tt.msg)
				}
				return
			}
			defer p.(io.Closer).Close()
			if p.Type() != login.Name {
				t.Errorf("Type() = %q", p.Type())
			}
			if _, ok := p.(auth.Mounter); !ok {
				t.Error("the provider mounts no routes")
			}
		})
	}
}
