package web

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/backupweb/backupweb/internal/testkit/browsertest"
)

// TestBrowserFolderPages shows the catalog's folder pages in Chromium, in
// light and dark, on a desktop and a phone: the top folder, a folder with
// checksums, a search and a stale folder. Each must fit the screen, show
// what it is about, and is saved as a screenshot.
func TestBrowserFolderPages(t *testing.T) {
	dir, _ := treeFixture(t)
	now := time.Now()
	for _, p := range []string{"web/site.tar.zst", "hosts/alpha/daily/a.tar"} {
		os.Chtimes(filepath.Join(dir, filepath.FromSlash(p)), now, now)
	}
	srv := treeServer(t, dir, Options{MaxAge: 26 * time.Hour})
	ctx := browsertest.New(t)
	pages := []struct {
		name, path, wait string
		want             []string // in the main element's text
	}{
		{"top", "/", "table.backups", []string{"hosts/", "db/", "web/", "top.tar", "stale"}},
		{"folder", "/backups/web/", "table.backups", []string{"site.tar.zst", "SHA-256", "Backups"}},
		{"search", "/backups/odd%20dir%20%25%23%3F/?q=.TAR&sort=name", "table.backups", []string{"with space.tar", "what?.tar", "100%.tar"}},
		{"stale", "/backups/db/", "#stale", []string{"pg-2.sql.zst", "No new backup here for more than 26h:"}},
	}
	for _, vp := range viewports {
		for _, scheme := range []string{"light", "dark"} {
			for _, pg := range pages {
				t.Run(pg.name+"-"+vp.name+"-"+scheme, func(t *testing.T) {
					err := chromedp.Do(ctx,
						chromedp.EmulateViewport(vp.width, vp.height, vp.opts...),
						setColorScheme(scheme),
						chromedp.Navigate(srv.URL+pg.path),
						chromedp.WaitVisible(chromedp.CSS(pg.wait)),
					)
					if err != nil {
						t.Fatal(err)
					}
					text, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("main")))
					if err != nil {
						t.Fatal(err)
					}
					for _, w := range pg.want {
						if !strings.Contains(text, w) {
							t.Errorf("the page lacks %q:\n%s", w, text)
						}
					}
					checkLayout(t, ctx)
					browsertest.Screenshot(t, ctx, "catalog-"+pg.name+"-"+vp.name+"-"+scheme)
				})
			}
		}
	}
	// The search form works without script: typing and submitting
	// loads the filtered page.
	err := chromedp.Do(ctx,
		chromedp.EmulateViewport(1280, 800),
		chromedp.Navigate(srv.URL+"/"),
		chromedp.SendKeys(chromedp.CSS("#q"), "we"),
		chromedp.Submit(chromedp.CSS("#q")),
		chromedp.WaitVisible(chromedp.CSS(`input[value="we"]`)),
	)
	if err != nil {
		t.Fatal(err)
	}
	text, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("table.backups")))
	if err != nil || !strings.Contains(text, "web/") || strings.Contains(text, "db/") {
		t.Errorf("after searching for we: %q, %v", text, err)
	}
}
