package web

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/auth/none"
	"github.com/backupweb/backupweb/internal/catalog"
	"github.com/backupweb/backupweb/internal/refusal"
)

var base = time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)

// backupFiles are the fixture's backups, newest first.
var backupFiles = []struct {
	name, content string
	mod           time.Time
}{
	{"nightly-2024-05-03.tar.gz", "third night", base.Add(48 * time.Hour)},
	{"nightly-2024-05-02.tar.gz", "second", base.Add(24 * time.Hour)},
	{"weekly 2024-05-01.tar.zst", "weekly full", base.Add(time.Hour)},
	{"nightly-2024-05-01.tar.gz", "first", base},
}

// fixture builds a backups folder with the files above, a subdirectory
// holding a file, links pointing in and out, and a secret beside the folder.
func fixture(t testing.TB) string {
	t.Helper()
	top := t.TempDir()
	dir := filepath.Join(top, "backups")
	must(t, os.Mkdir(dir, 0o700))
	must(t, os.WriteFile(filepath.Join(top, "secret.txt"), []byte("top secret"), 0o600))
	for _, f := range backupFiles {
		writeBackup(t, dir, f.name, f.content, f.mod)
	}
	must(t, os.Mkdir(filepath.Join(dir, "sub"), 0o700))
	writeBackup(t, filepath.Join(dir, "sub"), "inner.tar", "INNER-CONTENT", base)
	if err := os.Symlink(filepath.Join(top, "secret.txt"), filepath.Join(dir, "link-out")); err != nil {
		t.Skipf("cannot create symbolic links here: %v", err)
	}
	must(t, os.Symlink(backupFiles[0].name, filepath.Join(dir, "link-in")))
	return dir
}

func writeBackup(t testing.TB, dir, name, content string, mod time.Time) {
	t.Helper()
	p := filepath.Join(dir, name)
	must(t, os.WriteFile(p, []byte(content), 0o600))
	must(t, os.Chtimes(p, mod, mod))
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// fakeProvider is an auth.Provider whose answers the test chooses.
type fakeProvider struct {
	user  auth.User
	admit bool
	err   error
	mount func(*http.ServeMux)
}

func (p *fakeProvider) Type() string { return "fake" }

func (p *fakeProvider) Identify(*http.Request) (auth.User, bool, error) {
	return p.user, p.admit, p.err
}

func (p *fakeProvider) Challenge(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("WWW-Authenticate", `Basic realm="test"`)
	NewErrors(nil).Refuse(w, r, refusal.NoCredentials)
}

// mountingProvider adds Mount to fakeProvider.
type mountingProvider struct{ *fakeProvider }

func (p mountingProvider) Mount(mux *http.ServeMux) { p.mount(mux) }

// quietLogger returns a logger writing into a buffer the test can read.
func quietLogger() (*slog.Logger, *bytes.Buffer) {
	var buf bytes.Buffer
	return slog.New(slog.NewTextHandler(&buf, nil)), &buf
}

// noneHandler is the handler for type none over a fresh fixture.
func noneHandler(t testing.TB) (http.Handler, string) {
	t.Helper()
	dir := fixture(t)
	log, _ := quietLogger()
	return NewHandler(Options{Provider: none.Provider{}, Catalog: catalog.New(dir), Logger: log}), dir
}

// do sends one request through h.
func do(h http.Handler, method, target string, header map[string]string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, target, nil)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}
