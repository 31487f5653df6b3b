package web

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/access"
	"github.com/backupweb/backupweb/internal/auth/none"
	"github.com/backupweb/backupweb/internal/catalog"
	"github.com/backupweb/backupweb/internal/testkit"
	"github.com/backupweb/backupweb/internal/testkit/benchtest"
)

// The scale the catalog is held to: 100,000 backups in 1,000 folders.
const (
	scaleFolders = 1000
	scalePer     = 100
	// The contract asks a page within 50 ms, which BenchmarkFolderPages100k
	// measures; the test's bound is five times that, the fastest of ten
	// requests, so that only a change of the order of magnitude fails it on
	// a shared machine. Under -race, whose instrumentation multiplies the
	// cost of every access, the time is logged, not judged.
	scaleLatency = 250 * time.Millisecond
	scalePage    = 300 << 10
	scaleHeap    = 64 << 20
)

// scaleShrink is the default rule of a shrunk folder: the pages at scale
// judge every folder and draw its chart.
var scaleShrink = catalog.Shrink{Ratio: 0.5, Window: 7}

// scaleDir makes, in a temporary folder, fNNNN/backup-NNN.tar.zst, and
// returns the folder. Each is a hard link to an empty file: one system
// call a backup, and to the catalog a regular file like any other. It skips under -short.
func scaleDir(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: making 100,000 files takes seconds")
	}
	dir := t.TempDir()
	sources := t.TempDir()
	var empty string
	for f := range scaleFolders {
		if f%100 == 0 {
			// A new source every 10,000 links: ext4 allows 65,000 a file.
			empty = filepath.Join(sources, fmt.Sprintf("empty-%d", f))
			must(t, os.WriteFile(empty, nil, 0o600))
		}
		sub := filepath.Join(dir, fmt.Sprintf("f%04d", f))
		must(t, os.Mkdir(sub, 0o700))
		for i := range scalePer {
			p := filepath.Join(sub, fmt.Sprintf("backup-%03d.tar.zst", i))
			must(t, os.Link(empty, p))
		}
	}
	return dir
}

// timed returns the fastest of ten GETs of url (the machine is shared:
// the fastest is the one least disturbed) and the body's length.
func timed(t *testing.T, c *http.Client, url string) (time.Duration, int) {
	t.Helper()
	best, size := time.Hour, 0
	for range 10 {
		start := time.Now()
		res, err := c.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		n, _ := io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != 200 {
			t.Fatalf("%s: %d", url, res.StatusCode)
		}
		best, size = min(best, time.Since(start)), int(n)
	}
	return best, size
}

// TestScale: 100,000 backups in 1,000 folders: the catalog holds them in
// under 64 MiB; once watched, a folder page answers within scaleLatency
// and is at most 300 KiB; a backup added to one folder reads that folder
// again, not the others.
func TestScale(t *testing.T) {
	start := time.Now()
	dir := scaleDir(t)
	t.Logf("made %d files in %v", scaleFolders*scalePer, time.Since(start).Round(time.Millisecond))

	cat := catalog.New(dir)
	defer cat.Close()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	start = time.Now()
	top, err := cat.Tree()
	if err != nil {
		t.Fatal(err)
	}
	read := time.Since(start)
	runtime.GC()
	runtime.ReadMemStats(&after)
	heap := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	if top.Count != scaleFolders*scalePer || len(top.Folders) != scaleFolders {
		t.Fatalf("%d backups in %d folders", top.Count, len(top.Folders))
	}
	t.Logf("first reading %v, %d folders read, heap %.1f MiB", read.Round(time.Millisecond), cat.FoldersRead(), float64(heap)/(1<<20))
	if heap > scaleHeap {
		t.Errorf("the catalog holds %.1f MiB, want under 64 MiB", float64(heap)/(1<<20))
	}
	runtime.KeepAlive(top)

	log, _ := quietLogger()
	srv := httptest.NewServer(NewHandler(Options{Provider: none.Provider{}, Catalog: cat, Logger: log, MaxAge: 24 * time.Hour, Shrink: scaleShrink}))
	defer srv.Close()
	c := srv.Client()
	if _, page := get(t, c, srv.URL+"/backups/f0500/", nil); !strings.Contains(page, `<figure class="history">`) || strings.Count(page, `class="mark`) != scalePer {
		t.Error("a folder's page at scale lacks its history chart, or a mark of it")
	}
	for _, path := range []string{
		"/",
		"/?sort=name&order=desc",
		"/backups/f0500/",
		"/backups/f0500/?sort=size&limit=1000",
		"/?q=f09",
		"/?limit=1000",
		"/api/backups?path=f0500/",
		"/api/backups?path=",
	} {
		d, size := timed(t, c, srv.URL+path)
		t.Logf("%-40s %8v %7d bytes", path, d.Round(10*time.Microsecond), size)
		if d > scaleLatency && !benchtest.RaceEnabled {
			t.Errorf("%s: %v, want within %v", path, d, scaleLatency)
		}
		if size > scalePage {
			t.Errorf("%s: %d bytes, want at most 300 KiB", path, size)
		}
	}

	// With access rules, each entry is decided for the user; the totals
	// are remembered per folder and user, so the pages stay as fast.
	rs := &access.Rules{}
	for i, l := range []string{`GET ^/backups/f05 allow group:dba`, `* ^/backups/f05 deny`} {
		r, err := access.ParseRule(fmt.Sprintf("rule%d", i+1), l, false)
		must(t, err)
		rs.List = append(rs.List, r)
	}
	ruled := httptest.NewServer(NewHandler(Options{Provider: headerProvider{}, Catalog: cat, Logger: log, Rules: rs, Groups: &groupTable{}}))
	defer ruled.Close()
	for _, path := range []string{"/", "/api/backups?path=", "/backups/f0400/"} {
		start := time.Now()
		res, _ := get(t, c, ruled.URL+path, map[string]string{"X-Test-User": "bob"})
		first := time.Since(start)
		if res.StatusCode != 200 {
			t.Fatalf("%s: %d", path, res.StatusCode)
		}
		best := time.Hour
		for range 10 {
			start := time.Now()
			get(t, c, ruled.URL+path, map[string]string{"X-Test-User": "bob"})
			best = min(best, time.Since(start))
		}
		t.Logf("with rules %-28s first %8v, then %8v", path, first.Round(10*time.Microsecond), best.Round(10*time.Microsecond))
		if best > scaleLatency && !benchtest.RaceEnabled {
			t.Errorf("with rules, %s: %v, want within %v", path, best, scaleLatency)
		}
	}
	_, page := get(t, c, ruled.URL+"/?limit=500", map[string]string{"X-Test-User": "bob"})
	if !strings.Contains(page, "90000 backups") || strings.Contains(page, `href="/backups/f0500/"`) {
		t.Error("with rules, the top page counts or shows the hidden folders")
	}

	// One folder changes: it alone is read again.
	reads := cat.FoldersRead()
	must(t, os.WriteFile(filepath.Join(dir, "f0123", "new.tar.zst"), []byte("x"), 0o600))
	defer os.Remove(filepath.Join(dir, "f0123", "new.tar.zst"))
	testkit.WaitUntil(t, 5*time.Second, func() bool { top, _ := cat.Tree(); return top.Count == scaleFolders*scalePer+1 },
		func() string { return "the new backup does not show" })
	if n := cat.FoldersRead() - reads; n != 1 {
		t.Errorf("%d folders read after a change in one, want 1", n)
	}
	d, _ := timed(t, c, srv.URL+"/backups/f0123/")
	t.Logf("after the change: /backups/f0123/ %v", d.Round(10*time.Microsecond))
}

// BenchmarkFolderPagesWhileVerifying100k serves folder pages from a
// watched catalog of 100,000 backups in 1,000 folders, every one with a
// recorded SHA-256 (a SHA256SUMS per folder), while verification passes
// over all of them run back to back at the service's default rate: what
// a page costs while the service checks its backups. It reports the
// backups the passes checked per second beside the page's time.
func BenchmarkFolderPagesWhileVerifying100k(b *testing.B) {
	dir := scaleDir(b)
	empty := sha256.Sum256(nil)
	for f := range scaleFolders {
		var sums strings.Builder
		for i := range scalePer {
			fmt.Fprintf(&sums, "%s  backup-%03d.tar.zst\n", hex.EncodeToString(empty[:]), i)
		}
		must(b, os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%04d", f), "SHA256SUMS"), []byte(sums.String()), 0o600))
	}
	cat := catalog.New(dir)
	defer cat.Close()
	if _, err := cat.Tree(); err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var checked atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			cat.Verify(ctx, "", catalog.VerifyOptions{Rate: 50_000_000, Done: func(catalog.Check) { checked.Add(1) }})
		}
	}()
	defer func() { cancel(); <-done }()
	log, _ := quietLogger()
	h := NewHandler(Options{Provider: none.Provider{}, Catalog: cat, Logger: log, MaxAge: 24 * time.Hour, Shrink: scaleShrink})
	for _, path := range []string{"/", "/backups/f0500/", "/api/backups?path=f0500/"} {
		b.Run(strings.TrimPrefix(path, "/"), func(b *testing.B) {
			b.ReportAllocs()
			start, from := time.Now(), checked.Load()
			for b.Loop() {
				w := httptest.NewRecorder()
				h.ServeHTTP(w, httptest.NewRequest("GET", path, nil))
				if w.Code != 200 {
					b.Fatal(w.Code)
				}
			}
			b.ReportMetric(float64(checked.Load()-from)/time.Since(start).Seconds(), "verified/s")
		})
	}
}

// BenchmarkFolderPages100k serves the pages and answers of TestScale
// from a watched catalog of 100,000 backups in 1,000 folders, in process
// (no network): what a page costs once the catalog holds the folders.
func BenchmarkFolderPages100k(b *testing.B) {
	cat := catalog.New(scaleDir(b))
	defer cat.Close()
	if _, err := cat.Tree(); err != nil {
		b.Fatal(err)
	}
	log, _ := quietLogger()
	h := NewHandler(Options{Provider: none.Provider{}, Catalog: cat, Logger: log, MaxAge: 24 * time.Hour, Shrink: scaleShrink})
	for _, path := range []string{"/", "/backups/f0500/", "/?q=f09", "/?limit=500", "/api/backups?path=f0500/", "/api/backups?path="} {
		b.Run(strings.TrimPrefix(path, "/"), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				w := httptest.NewRecorder()
				h.ServeHTTP(w, httptest.NewRequest("GET", path, nil))
				if w.Code != 200 {
					b.Fatal(w.Code)
				}
			}
		})
	}
}
