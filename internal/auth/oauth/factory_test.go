package oauth_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/backupweb/backupweb/internal/app"
	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/auth/oauth"
	"github.com/backupweb/backupweb/internal/ini"
)

const factoryConfig = `[authentication]
type = oauth
provider = google
client_id = the-client
client_secret = the-secret-value
redirect_uri = https://backups.example.com/oauth/callback
authorized_domains = example.com
`

func TestFactoryBuildsOAuth(t *testing.T) {
	key := strings.Repeat("k", 64)
	tests := []struct {
		name      string
		checkOnly bool
		secret    string
		ok        bool
	}{
		{"serve", false, key, true},
		{"check-config", true, key, true},
		{"no secret key", true, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := &ini.Report{}
			f := ini.Parse("backupweb.ini", strings.NewReader(factoryConfig), rep)
			dir := filepath.Join(t.TempDir(), "state")
			lookup := func(name string) (string, bool) {
				return tt.secret, name == app.SecretEnv && tt.secret != ""
			}
			var p auth.Provider
			var err error
			if tt.checkOnly {
				var typ app.Type
				typ, err = app.CheckProvider(f.Section(app.Section), lookup)
				if err == nil {
					p = checkedType{typ.Name}
				}
			} else {
				p, err = app.NewProvider(f.Section(app.Section), auth.Deps{StateDir: dir}, lookup)
			}
			if (err == nil) != tt.ok {
				t.Fatalf("app: %v; problems %v", err, rep.Problems())
			}
			if !tt.ok {
				if n := rep.ErrorCount(); n != 1 {
					t.Errorf("%d errors for a missing secret key, want 1: %v", n, rep.Problems())
				}
				return
			}
			if p.Type() != oauth.Name {
				t.Fatalf("type %q", p.Type())
			}
			if _, ok := p.(auth.Mounter); !ok && !tt.checkOnly {
				t.Error("the provider mounts no routes")
			}
			_, statErr := os.Stat(dir)
			if tt.checkOnly != os.IsNotExist(statErr) {
				t.Errorf("check-only=%v, yet the state directory exists=%v", tt.checkOnly, statErr == nil)
			}
			if c, ok := p.(interface{ Close() error }); ok {
				c.Close()
			}
			for _, pr := range rep.Problems() {
				if strings.Contains(pr.String(), "the-secret-value") {
					t.Errorf("problem quotes the client secret: %s", pr)
				}
			}
		})
	}
}

func TestFactoryListsOAuthKeys(t *testing.T) {
	typ, ok := app.Lookup("OAuth")
	if !ok || !typ.NeedsSecret {
		t.Fatalf("oauth type: %+v %v", typ, ok)
	}
	for _, k := range []string{"provider", "client_id", "client_secret", "redirect_uri", "authorized_domains",
		"authorized_users", "authorization_endpoint", "token_endpoint", "userinfo_endpoint", "scopes",
		"issuer", "base_url", "session_idle_timeout", "session_lifetime"} {
		if !typ.Reads(k) {
			t.Errorf("key %s is not listed", k)
		}
	}
}

// checkedType stands for the type app.Check named.
type checkedType struct{ name string }

func (c checkedType) Type() string                                  { return c.name }
func (checkedType) Identify(*http.Request) (auth.User, bool, error) { return auth.User{}, false, nil }
func (checkedType) Challenge(http.ResponseWriter, *http.Request)    {}
