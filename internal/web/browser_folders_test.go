package web

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/backupweb/backupweb/internal/testkit/browsertest"
	"github.com/backupweb/backupweb/internal/ui"
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

// linkNames are backup and folder names that must each be one working
// link: a time with colons, characters that mean something in a URL, a
// space, non-ASCII, leading dashes, and names that look like schemes.
var linkNames = []string{
	"2026-12-04T02:00:00Z.tar.gz",
	"db/pg-2026-12-04T02:00:00Z.sql.gz",
	"2026-12-04T02:00:00Z/full.tar",
	"javascript:alert(1)",
	"mailto:root",
	"what?.tar",
	"hash#1.tar",
	"100%.tar",
	"%2e%2e.tar",
	"semi;colon.tar",
	"with space.tar",
	"ünïcode-データ.tar",
	"-leading-dash.tar",
	"--/--rf.tar",
	"odd: ;?#%/-x:y.tar",
}

// TestBrowserFollowsEveryLink lists linkNames and, in Chromium, follows
// every link of every folder page from the top down: a page link must
// load with 200, and a backup's link, as the browser resolved it, must
// answer that backup's bytes.
func TestBrowserFollowsEveryLink(t *testing.T) {
	dir := t.TempDir()
	for _, n := range linkNames {
		p := filepath.Join(dir, filepath.FromSlash(n))
		must(t, os.MkdirAll(filepath.Dir(p), 0o700))
		writeBackup(t, filepath.Dir(p), filepath.Base(p), "bytes of "+n, base)
	}
	srv := treeServer(t, dir, Options{})
	ctx := browsertest.New(t)
	// The pages' Content-Security-Policy allows no fetch; the test's own
	// fetch of a backup's link, as the page resolved it, is let through.
	if _, err := chromedp.Call(ctx, page.SetBypassCSP, page.SetBypassCSPParams{Enabled: true}); err != nil {
		t.Fatal(err)
	}

	type link struct {
		Attr, URL string
		Download  bool
	}
	const links = `[...document.querySelectorAll("a[href]")].map(a => ({attr: a.getAttribute("href"), url: a.href, download: a.hasAttribute("download")}))`

	// open loads u in the tab tab and returns its links; it fails the
	// test unless the page answers 200.
	open := func(tab context.Context, u string) []link {
		t.Helper()
		res, err := chromedp.RunResponse(tab, chromedp.Navigate(u))
		if err != nil {
			t.Fatalf("%s: %v", u, err)
		}
		if res.Status != http.StatusOK {
			t.Errorf("%s answers %d", u, res.Status)
		}
		ls, err := chromedp.Run(tab, chromedp.Evaluate[[]link](links))
		if err != nil {
			t.Fatalf("%s: %v", u, err)
		}
		return ls
	}
	// fetched asks for a backup's link from the page, as the browser
	// resolved it (a.href), and returns its bytes; it fails the test
	// unless the answer is 200.
	fetched := func(l link) string {
		t.Helper()
		u, _ := json.Marshal(l.URL)
		got, err := chromedp.Run(ctx, chromedp.Evaluate[string](`fetch(`+string(u)+`).then(async r => r.status + " " + await r.text())`, chromedp.EvalAwaitPromise))
		if err != nil {
			t.Fatalf("fetching %q: %v", l.Attr, err)
		}
		status, body, _ := strings.Cut(got, " ")
		if status != "200" {
			t.Errorf("the link %q (%s) answers %s", l.Attr, l.URL, status)
		}
		return body
	}

	// Links to other pages than folders (sorted, another page of the
	// same folder) are followed in a second tab, so the folder's page
	// stays as it is in the first.
	other, cancelOther := chromedp.NewContext(ctx)
	defer cancelOther()

	seen := map[string]bool{srv.URL + "/": true}
	queue := []string{srv.URL + "/"}
	got := map[string]bool{} // the backups whose bytes came back
	followed := 0
	for len(queue) > 0 {
		page := queue[0]
		queue = queue[1:]
		ls := open(ctx, page)
		for _, l := range ls {
			if strings.Contains(l.Attr, "ZgotmplZ") || !strings.HasPrefix(l.URL, srv.URL+"/") {
				t.Errorf("on %s, the link %q leads to %s", page, l.Attr, l.URL)
				continue
			}
			followed++
			if l.Download && strings.HasSuffix(l.Attr, "?archive=tar") {
				fetched(l) // the folder as a tar: 200, its content tested elsewhere
				continue
			}
			if l.Download {
				body := fetched(l)
				n, ok := strings.CutPrefix(body, "bytes of ")
				if !ok {
					t.Errorf("on %s, the link %q brought %q", page, l.Attr, body)
					continue
				}
				if want := srv.URL + ui.BackupsHref(n); l.URL != want {
					t.Errorf("the link to %q is %s, want %s", n, l.URL, want)
				}
				got[n] = true
				continue
			}
			u, err := url.Parse(l.URL)
			must(t, err)
			u.Fragment = ""
			if !seen[u.String()] {
				seen[u.String()] = true
				if strings.HasSuffix(u.Path, "/") && u.RawQuery == "" {
					queue = append(queue, u.String()) // a folder: follow its links too
				} else {
					open(other, u.String())
				}
			}
		}
	}
	for _, n := range linkNames {
		if !got[n] {
			t.Errorf("no link on any page brought %q", n)
		}
	}
	t.Logf("%d links followed on %d pages", followed, len(seen))
}
