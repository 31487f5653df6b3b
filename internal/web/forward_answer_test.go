package web

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"github.com/backupweb/backupweb/internal/attrs"
	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/catalog"
	"github.com/backupweb/backupweb/internal/peer"
)

// TestForwardAuthAnswerIsOurs: whatever identity headers the client writes
// (any spelling of X-Auth-Request-*, X-Forwarded-User…), the forward-auth
// answers carry exactly backupweb's X-Auth-Request-User and, only when
// known, X-Auth-Request-Email, and nothing of the kind when the request
// is not authenticated. Served over loopback, as a proxy asks.
func TestForwardAuthAnswerIsOurs(t *testing.T) {
	forged := map[string]string{
		"X-Auth-Request-User":   "admin",
		"X-Auth-Request-Email":  "admin@corp.example",
		"X_Auth_Request_Email":  "boss@corp.example",
		"x_auth_request_user":   "root",
		"X-Auth-Request-Groups": "admins",
		"X-Forwarded-User":      "admin",
		"X_Forwarded_Email":     "admin@corp.example",
	}
	trusted := peer.NewResolver([]netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")})
	tests := []struct {
		name string
		p    auth.Provider
		want map[string]string // folded X-Auth-Request-* name -> value
	}{
		{"user without e-mail", &fakeProvider{admit: true, user: auth.User{Name: "alice", Type: "flask-login"}},
			map[string]string{"x-auth-request-user": "alice"}},
		{"user with e-mail", &sessionish{},
			map[string]string{"x-auth-request-user": "carol", "x-auth-request-email": "carol@example.com"}},
		{"user with an empty e-mail attribute", &fakeProvider{admit: true, user: auth.User{Name: "bob", Type: "oauth", Attrs: attrs.Of(map[string]string{"email": ""})}},
			map[string]string{"x-auth-request-user": "bob"}},
		{"not authenticated", &fakeProvider{admit: false}, map[string]string{}},
	}
	for _, tt := range tests {
		srv := httptest.NewServer(NewHandler(Options{Provider: tt.p, Catalog: catalog.New(t.TempDir()), Resolver: trusted}))
		for _, path := range []string{RequestAuthPath, ForwardAuthPath} {
			t.Run(tt.name+" "+path, func(t *testing.T) {
				req, _ := http.NewRequest("GET", srv.URL+path, nil)
				for k, v := range forged {
					req.Header[k] = []string{v}
				}
				req.Header.Set("Cookie", "s=ok")
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				got := map[string]string{}
				for k, v := range resp.Header {
					f := strings.ReplaceAll(strings.ToLower(k), "_", "-")
					if strings.HasPrefix(f, "x-auth-request-") || strings.HasPrefix(f, "x-forwarded-") {
						got[f] = strings.Join(v, "|")
					}
				}
				if fmt.Sprint(got) != fmt.Sprint(tt.want) {
					t.Errorf("status %d, answer headers %v, want %v", resp.StatusCode, got, tt.want)
				}
			})
		}
		srv.Close()
	}
}
