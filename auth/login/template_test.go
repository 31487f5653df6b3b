package login

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/backupweb/backupweb/auth"
	"github.com/backupweb/backupweb/internal/ini"
)

// customTemplate is an operator's login page: standalone, using every
// field of ui.LoginPage.
const customTemplate = `<!doctype html>
<title>ACME backups: {{.Title}}</title>
<h1>ACME backups</h1>
{{with .Error}}<p class="oops">{{.}}</p>{{end}}
<form method="post" action="{{.Action}}">
<input type="hidden" name="csrf_token" value="{{.CSRFToken}}">
<input type="hidden" name="next" value="{{.Next}}">
<input name="username" value="{{.Username}}">
<input name="password" type="password">
<button>Enter</button>
</form>
`

func TestCustomTemplate(t *testing.T) {
	tmpl := filepath.Join(t.TempDir(), "login.html")
	if err := os.WriteFile(tmpl, []byte(customTemplate), 0o600); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, func(c *Config) { c.LoginTemplate = tmpl })
	b := h.browser()
	r := b.get("/login?next=/api/me", true)
	if r.status != http.StatusOK || !strings.Contains(r.body, "ACME backups") {
		t.Fatalf("custom page not served: %d", r.status)
	}
	r = b.login("alice", "wrong", "/api/me")
	if r.status != http.StatusUnauthorized || !strings.Contains(r.body, `<p class="oops">`+auth.BadCredentials.Message()) {
		t.Fatalf("custom page with error: %d", r.status)
	}
	if user, _ := field(r.body, "username"); user != "alice" {
		t.Errorf("username field %q, want alice", user)
	}
	if r := b.login("alice", "alice-pw", "/api/me"); r.status != http.StatusSeeOther || r.header.Get("Location") != "/api/me" {
		t.Errorf("login through the custom page: %d %q", r.status, r.header.Get("Location"))
	}
}

func TestTemplateProblems(t *testing.T) {
	dir := t.TempDir()
	users := filepath.Join(dir, "users")
	writeFile(t, users, usersText(t, "alice"))
	tests := []struct {
		name, text string
		severity   ini.Severity
		msg        string
	}{
		{"syntax error", "<p>{{.Title</p>", ini.Error, "login template"},
		{"unknown field", "<p>{{.Token}}</p>", ini.Error, "fails with the login page's data"},
		{"missing next", strings.Replace(customTemplate, `name="next"`, `name="then"`, 1), ini.Warning, "no form field named next"},
		{"missing csrf_token", strings.Replace(customTemplate, `name="csrf_token"`, `name="token"`, 1), ini.Error, "no form field named csrf_token, so it could never sign anyone in"},
		{"missing password", strings.Replace(customTemplate, `name="password"`, `name="pw"`, 1), ini.Error, "no form field named password"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "-")+".html")
			if err := os.WriteFile(path, []byte(tt.text), 0o600); err != nil {
				t.Fatal(err)
			}
			_, ok, problems := loadSection(t, "users_file = "+users+"\nuse_bcrypt = true\nlogin_template = "+path)
			if ok != (tt.severity == ini.Warning) {
				t.Errorf("ok = %v", ok)
			}
			found := false
			for _, p := range problems {
				if p.Severity == tt.severity && p.Key == "login_template" && strings.Contains(p.Msg, tt.msg) {
					found = true
				}
			}
			if !found {
				t.Errorf("no %s mentioning %q in %v", tt.severity, tt.msg, problems)
			}
		})
	}
}
