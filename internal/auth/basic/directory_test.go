package basic

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/catalog"
	"github.com/backupweb/backupweb/internal/directory"
	"github.com/backupweb/backupweb/internal/testkit/ldaptest"
	"github.com/backupweb/backupweb/internal/testkit/logtest"
	"github.com/backupweb/backupweb/internal/web"
)

// startDirectory serves a basic provider whose users are srv's.
func startDirectory(t *testing.T, srv *ldaptest.Server) (*Provider, *httptest.Server, *logtest.Buffer) {
	t.Helper()
	logs := &logtest.Buffer{}
	log := slog.New(slog.NewTextHandler(logs, nil))
	p, err := New(Config{
		UsersFrom: UsersFromDirectory,
		Directory: directory.Config{
			URL: srv.TLSURL(), CAFile: srv.CAFile,
			BindDN: ldaptest.ServiceDN, BindPassword: ldaptest.ServicePassword,
			BaseDN: ldaptest.Base, Timeout: 300 * time.Millisecond,
		},
		CacheTTL: time.Hour,
	}, auth.Deps{Logger: log, Errors: web.NewErrors(log)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	backups := t.TempDir()
	os.WriteFile(filepath.Join(backups, "db.tar.gz"), []byte("data"), 0o600)
	hs := httptest.NewServer(web.NewHandler(web.Options{Provider: p, Catalog: catalog.New(backups), Logger: log, Errors: web.NewErrors(log)}))
	t.Cleanup(hs.Close)
	return p, hs, logs
}

// get fetches /api/backups with user and pw.
func getAs(t *testing.T, hs *httptest.Server, user, pw string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest("GET", hs.URL+"/api/backups", nil)
	req.SetBasicAuth(user, pw)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

// TestDirectoryBasic: the directory's users are admitted with their
// passwords, under the directory's spelling of the name and with their
// groups; wrong and empty passwords and names that would widen the
// search are refused alike.
func TestDirectoryBasic(t *testing.T) {
	srv := ldaptest.Start(t, "")
	p, hs, logs := startDirectory(t, srv)
	for _, tc := range []struct {
		user, pw string
		status   int
		name     string
		groups   []string
	}{
		{"alice", "alice-password", 200, "alice", []string{"backup-readers"}},
		{"ALICE", "alice-password", 200, "alice", []string{"backup-readers"}},
		{"bob", "bob-password", 200, "bob", []string{"staff"}},
		{"alice", "bob-password", 401, "", nil},
		{"alice", "", 401, "", nil},
		{"twin", "twin-password", 401, "", nil},
		{"*", "alice-password", 401, "", nil},
		{"al*", "alice-password", 401, "", nil},
		{"alice)(uid=*", "alice-password", 401, "", nil},
		{`alic\65`, "alice-password", 401, "", nil},
		{"alice\x00", "alice-password", 401, "", nil},
		{"alic\xe9", "alice-password", 401, "", nil},
	} {
		t.Run(tc.user+"/"+tc.pw, func(t *testing.T) {
			if resp := getAs(t, hs, tc.user, tc.pw); resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d", resp.StatusCode, tc.status)
			}
			req := httptest.NewRequest("GET", "/api/backups", nil)
			req.SetBasicAuth(tc.user, tc.pw)
			u, ok, err := p.Identify(req)
			if err != nil && tc.status == 200 || ok != (tc.status == 200) || u.Name != tc.name || !slices.Equal(u.Groups, tc.groups) ||
				ok && u.Attrs.Get("email") != tc.name+"@example.org" {
				t.Fatalf("Identify = %+v, %v, %v", u, ok, err)
			}
		})
	}
	if !strings.Contains(logs.String(), "auth refused") {
		t.Error("no auth refused line")
	}
}

// TestDirectoryBasicCache: a right password costs one bind per cache
// lifetime (admitted while the directory hangs), anything not remembered
// is 503 with Retry-After while it hangs or is gone, never admitted, and
// SIGHUP (Reload) forgets what was remembered.
func TestDirectoryBasicCache(t *testing.T) {
	srv := ldaptest.Start(t, "")
	p, hs, logs := startDirectory(t, srv)
	if resp := getAs(t, hs, "alice", "alice-password"); resp.StatusCode != 200 {
		t.Fatalf("first: %d", resp.StatusCode)
	}
	srv.Pause()
	if resp := getAs(t, hs, "alice", "alice-password"); resp.StatusCode != 200 {
		t.Errorf("remembered, while the directory hangs: %d", resp.StatusCode)
	}
	for _, c := range []struct{ user, pw string }{{"bob", "bob-password"}, {"alice", "wrong"}} {
		if resp := getAs(t, hs, c.user, c.pw); resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
			t.Errorf("%s, while the directory hangs: %d %q", c.user, resp.StatusCode, resp.Header.Get("Retry-After"))
		}
	}
	if err := p.Ready(t.Context()); err == nil || !strings.Contains(err.Error(), "timeout") {
		t.Errorf("Ready while the directory hangs: %v", err)
	}
	if !strings.Contains(logs.String(), "auth: the directory did not answer") {
		t.Error("no error line")
	}
	srv.Resume()

	srv.SetPassword("uid=alice,ou=people,"+ldaptest.Base, "changed")
	if err := p.Reload(); err != nil {
		t.Fatal(err)
	}
	if resp := getAs(t, hs, "alice", "alice-password"); resp.StatusCode != 401 {
		t.Errorf("the old password after a reload: %d", resp.StatusCode)
	}
	if resp := getAs(t, hs, "alice", "changed"); resp.StatusCode != 200 {
		t.Errorf("the new password: %d", resp.StatusCode)
	}
	srv.Kill()
	if resp := getAs(t, hs, "bob", "bob-password"); resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("the directory gone: %d", resp.StatusCode)
	}
}
