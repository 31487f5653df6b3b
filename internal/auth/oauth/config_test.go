package oauth

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/backupweb/backupweb/internal/auth"
)

// TestValidate: the rules of a Config are one method, which New applies
// to a Config made in code; each problem names its key and none shows the
// client secret.
func TestValidate(t *testing.T) {
	good := Config{Provider: "github", ClientID: "id", ClientSecret: "the-secret", RedirectURL: "https://b.example.com" + CallbackPath,
		Rule: Rule{Domains: []string{"example.com"}}}
	tests := []struct {
		name string
		edit func(*Config)
		want string // "" when valid
	}{
		{"valid", func(*Config) {}, ""},
		{"unknown provider", func(c *Config) { c.Provider = "myspace" }, "provider: unknown provider"},
		{"no client id", func(c *Config) { c.ClientID = "" }, "client_id: missing required key"},
		{"no secret", func(c *Config) { c.ClientSecret = "" }, "client_secret: missing required key"},
		{"redirect elsewhere", func(c *Config) { c.RedirectURL = "https://b.example.com/callback" }, "redirect_uri: its path must be " + CallbackPath},
		{"relative endpoint", func(c *Config) { c.TokenURL = "/token" }, "token_endpoint: must be an absolute"},
		{"nobody admitted", func(c *Config) { c.Rule = Rule{} }, "authorized_domains: set authorized_domains or authorized_users"},
		{"malformed user", func(c *Config) { c.Rule = Rule{Users: []string{"not-an-address"}} }, "authorized_users:"},
		{"generic without endpoints", func(c *Config) { c.Provider = "generic" }, "authorization_endpoint: missing required key"},
		{"OpenID Connect without openid", func(c *Config) { c.Provider, c.Scopes = "google", []string{"email"} }, "scopes: must include openid"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := good
			tt.edit(&c)
			err := c.Validate()
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Validate = %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Validate = %v, want %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "the-secret") {
				t.Errorf("error %q shows the client secret", err)
			}
			if _, nerr := New(c, auth.Deps{StateDir: t.TempDir(), SecretKey: []byte(strings.Repeat("k", 32))}); nerr == nil || !strings.Contains(nerr.Error(), tt.want) {
				t.Errorf("New = %v, want the same refusal", nerr)
			}
		})
	}
}

// TestSignInRefusalsFollowTheOneRule: a refused callback is the styled
// page for a browser and {"error": ...} for a client asking for JSON.
func TestSignInRefusalsFollowTheOneRule(t *testing.T) {
	p, err := New(Config{Provider: "github", ClientID: "id", ClientSecret: "s", RedirectURL: "https://b.example.com" + CallbackPath,
		Rule: Rule{All: true}}, auth.Deps{StateDir: t.TempDir(), SecretKey: []byte(strings.Repeat("k", 32))})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	mux := http.NewServeMux()
	p.Mount(mux)
	for accept, want := range map[string]string{"text/html": "<html", "application/json": `{"error":`} {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest("GET", CallbackPath+"?state=nope&code=x", nil)
		req.Header.Set("Accept", accept)
		mux.ServeHTTP(rec, req)
		if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), want) {
			t.Errorf("Accept %s: %d %.100q, want 400 with %q", accept, rec.Code, rec.Body.String(), want)
		}
	}
}
