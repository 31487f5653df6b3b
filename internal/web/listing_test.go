package web

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/catalog"
	"github.com/backupweb/backupweb/internal/testkit"
)

// TestBackupsETag: /api/backups carries a strong ETag that stays while the
// folder is unchanged; If-None-Match naming it gets 304 without a body; a
// new backup changes it. The answer is encoded once per listing.
func TestBackupsETag(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.tar.gz"), []byte("a"), 0o600)
	cat := catalog.New(dir)
	defer cat.Close()
	s := &site{cat: cat, log: slog.New(slog.DiscardHandler), errs: NewErrors(nil), now: time.Now}
	get := func(inm string) *httptest.ResponseRecorder {
		r := httptest.NewRequest("GET", "/api/backups", nil)
		if inm != "" {
			r.Header.Set("If-None-Match", inm)
		}
		w := httptest.NewRecorder()
		s.apiBackups(w, r)
		return w
	}
	first := get("")
	etag := first.Header().Get("ETag")
	if first.Code != 200 || len(etag) < 10 || etag[0] != '"' || first.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("first answer %d, ETag %q, headers %v", first.Code, etag, first.Header())
	}
	enc := s.lists.last.Load()
	if second := get(""); second.Header().Get("ETag") != etag || second.Body.String() != first.Body.String() {
		t.Fatalf("unchanged folder, another answer: %q %q", second.Header().Get("ETag"), second.Body)
	}
	if s.lists.last.Load() != enc {
		t.Error("the unchanged listing was encoded again")
	}
	for _, c := range []struct {
		inm  string
		want int
	}{
		{etag, 304},
		{"W/" + etag, 304},
		{`"other", ` + etag, 304},
		{"*", 304},
		{`"other"`, 200},
		{etag[:len(etag)-2] + `"`, 200},
	} {
		w := get(c.inm)
		if w.Code != c.want {
			t.Errorf("If-None-Match %s: %d, want %d", c.inm, w.Code, c.want)
		}
		if c.want == 304 && (w.Body.Len() != 0 || w.Header().Get("ETag") != etag) {
			t.Errorf("If-None-Match %s: 304 with body %q, ETag %q", c.inm, w.Body, w.Header().Get("ETag"))
		}
	}

	os.WriteFile(filepath.Join(dir, "b.tar.gz"), []byte("bb"), 0o600)
	// A folder's modification time may not move within its resolution;
	// make sure it does. The watcher (Linux) reports the change within
	// moments: wait for it.
	later := time.Now().Add(time.Minute)
	os.Chtimes(dir, later, later)
	var w *httptest.ResponseRecorder
	testkit.WaitUntil(t, 5*time.Second, func() bool { w = get(etag); return w.Code == 200 },
		func() string { return fmt.Sprintf("after a new backup: %d", w.Code) })
	if w.Header().Get("ETag") == etag {
		t.Fatalf("after a new backup: %d, ETag %q (was %q)", w.Code, w.Header().Get("ETag"), etag)
	}
}

// TestBackupsNotModifiedStillProtected: a stranger who sends the right
// ETag is refused like any other, not told the list is unchanged.
func TestBackupsNotModifiedStillProtected(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.tar.gz"), []byte("a"), 0o600)
	admit := &fakeProvider{admit: true, user: auth.User{Name: "alice", Type: "fake"}}
	h := NewHandler(Options{Provider: admit, Catalog: catalog.New(dir), Logger: slog.New(slog.DiscardHandler)})
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "/api/backups", nil))
	etag := w.Header().Get("ETag")
	refuse := &fakeProvider{}
	h = NewHandler(Options{Provider: refuse, Catalog: catalog.New(dir), Logger: slog.New(slog.DiscardHandler)})
	r := httptest.NewRequest("GET", "/api/backups", nil)
	r.Header.Set("If-None-Match", etag)
	w = httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code == http.StatusNotModified || w.Code == http.StatusOK || w.Header().Get("ETag") != "" {
		t.Fatalf("refused request answered %d with ETag %q", w.Code, w.Header().Get("ETag"))
	}
}
