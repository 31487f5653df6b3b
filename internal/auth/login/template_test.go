package login

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/backupweb/backupweb/internal/refusal"
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
	if r.status != http.StatusUnauthorized || !strings.Contains(r.body, `<p class="oops">`+refusal.BadCredentials.Message()) {
		t.Fatalf("custom page with error: %d", r.status)
	}
	if user, _ := field(r.body, "username"); user != "alice" {
		t.Errorf("username field %q, want alice", user)
	}
	if r := b.login("alice", "alice-pw", "/api/me"); r.status != http.StatusSeeOther || r.header.Get("Location") != "/api/me" {
		t.Errorf("login through the custom page: %d %q", r.status, r.header.Get("Location"))
	}
}
