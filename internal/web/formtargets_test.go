package web

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/auth/none"
)

// leadsOn is a provider whose sign-out leads on to other sites.
type leadsOn struct {
	auth.Provider
	targets []string
}

func (p leadsOn) FormTargets() []string { return p.targets }

func TestSecurityHeadersForFormTargets(t *testing.T) {
	page := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusOK) })
	base := none.Provider{}
	tests := []struct {
		name string
		p    auth.Provider
		want string
	}{
		{"no targets", base, contentSecurityPolicy},
		{"empty targets", leadsOn{base, nil}, contentSecurityPolicy},
		{"identity provider", leadsOn{base, []string{"https://sso.example.com"}},
			"default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self' https://sso.example.com; frame-ancestors 'none'; base-uri 'none'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			SecurityHeadersFor(tt.p, page).ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/", nil))
			if got := w.Header().Get("Content-Security-Policy"); got != tt.want {
				t.Errorf("Content-Security-Policy = %q, want %q", got, tt.want)
			}
			if w.Header().Get("X-Frame-Options") != "DENY" || w.Header().Get("X-Content-Type-Options") != "nosniff" {
				t.Errorf("the other security headers are missing: %v", w.Header())
			}
		})
	}
}
