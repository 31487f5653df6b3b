package web

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"
)

// TestFolderWithoutSlashRedirects: a folder asked without its final slash
// answers 301 to the folder, its spelling and query kept; a file, a
// missing name and a folder the rules hide do not redirect.
func TestFolderWithoutSlashRedirects(t *testing.T) {
	dir, _ := treeFixture(t)
	must(t, os.MkdirAll(filepath.Join(dir, "ops", "daily"), 0o700))
	writeBackup(t, filepath.Join(dir, "ops", "daily"), "o.tar", "ops", base)
	gt := &groupTable{}
	gt.set(map[string][]string{"bob": {"ops"}}, false)
	srv := treeServer(t, dir, Options{Provider: headerProvider{}, Rules: testRules(t), Groups: gt})
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, tc := range []struct {
		target, user string
		status       int
		location     string
	}{
		{"/backups/db", "bob", http.StatusMovedPermanently, "/backups/db/"},
		{"/backups/db?sort=name&order=desc", "bob", http.StatusMovedPermanently, "/backups/db/?sort=name&order=desc"},
		{"/backups/hosts/alpha", "bob", http.StatusMovedPermanently, "/backups/hosts/alpha/"},
		{"/backups/odd%20dir%20%25%23%3F", "bob", http.StatusMovedPermanently, "/backups/odd%20dir%20%25%23%3F/"},
		{"/backups/db?archive=tar", "bob", http.StatusMovedPermanently, "/backups/db/?archive=tar"},
		{"/backups/ops", "bob", http.StatusMovedPermanently, "/backups/ops/"},
		{"/backups/ops", "carol", http.StatusForbidden, ""},
		{"/backups/ops/daily", "carol", http.StatusForbidden, ""},
		{"/backups/top.tar", "bob", http.StatusOK, ""},
		{"/backups/nothing", "bob", http.StatusNotFound, ""},
		{"/backups/.git", "bob", http.StatusNotFound, ""},
		{"/backups/etc", "bob", http.StatusNotFound, ""},
		{"/backups/db", "", http.StatusUnauthorized, ""},
	} {
		t.Run(tc.target+" "+tc.user, func(t *testing.T) {
			req, _ := http.NewRequest("GET", srv.URL+tc.target, nil)
			if tc.user != "" {
				req.Header.Set("X-Test-User", tc.user)
			}
			res, err := noFollow.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != tc.status {
				t.Fatalf("status %d, want %d", res.StatusCode, tc.status)
			}
			if got := res.Header.Get("Location"); got != tc.location {
				t.Fatalf("Location %q, want %q", got, tc.location)
			}
		})
	}
}
