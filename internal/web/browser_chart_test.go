package web

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/backupweb/backupweb/internal/catalog"
	"github.com/backupweb/backupweb/internal/testkit/browsertest"
)

// chartFixture makes db/ with ten nightly dumps, the last one a failed
// dump of a few bytes, and returns the backups folder.
func chartFixture(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(dir, "db"), 0o700))
	for i := range 10 {
		size := 4000 + 150*i
		if i == 9 {
			size = 40
		}
		writeBackup(t, filepath.Join(dir, "db"), "pg-2024-05-"+string(rune('0'+(i+1)/10))+string(rune('0'+(i+1)%10))+".sql", strings.Repeat("x", size), base.Add(time.Duration(i)*24*time.Hour))
	}
	return dir
}

// TestBrowserHistoryChart shows a folder's history chart in Chromium, in
// light and dark, on a desktop and a phone: an SVG made by the server
// inside the page, one mark per backup, the failed dump marked, within the
// screen, in colours of the scheme that stand out from the background, and
// described in words beside it; the page keeps its policy and holds no
// script. Each is saved as a screenshot.
func TestBrowserHistoryChart(t *testing.T) {
	dir := chartFixture(t)
	srv := treeServer(t, dir, Options{Shrink: catalog.Shrink{Ratio: 0.5, Window: 7}})
	res, page := get(t, nil, srv.URL+"/backups/db/", nil)
	if res.Header.Get("Content-Security-Policy") != cspValue[0] {
		t.Errorf("Content-Security-Policy %q, want the pages' own %q", res.Header.Get("Content-Security-Policy"), cspValue[0])
	}
	for _, banned := range []string{"<script", " style=", "onload=", "<style"} {
		if strings.Contains(page, banned) {
			t.Errorf("the page holds %q", banned)
		}
	}
	ctx := browsertest.New(t)
	lineColor := map[string]string{}
	for _, vp := range viewports {
		for _, scheme := range []string{"light", "dark"} {
			t.Run(vp.name+"-"+scheme, func(t *testing.T) {
				err := chromedp.Do(ctx,
					chromedp.EmulateViewport(vp.width, vp.height, vp.opts...),
					setColorScheme(scheme),
					chromedp.Navigate(srv.URL+"/backups/db/"),
					chromedp.WaitVisible(chromedp.CSS("figure.history svg")),
				)
				if err != nil {
					t.Fatal(err)
				}
				type shape struct {
					Marks, Shrunk, Titles      int
					Width, Height, Screen      float64
					Role, Summary, Described   string
					Line, Background, ShrunkAt string
				}
				got, err := chromedp.Run(ctx, chromedp.Evaluate[shape](`(() => {
					const svg = document.querySelector("figure.history svg");
					const r = svg.getBoundingClientRect();
					const line = svg.querySelector("polyline.line");
					const shrunk = svg.querySelector("circle.mark.is-shrunk");
					return {
						marks: svg.querySelectorAll("circle.mark").length,
						shrunk: svg.querySelectorAll("circle.mark.is-shrunk").length,
						titles: svg.querySelectorAll("circle.mark > title").length,
						width: r.width, height: r.height, screen: document.documentElement.clientWidth,
						role: svg.getAttribute("role"),
						summary: document.getElementById(svg.getAttribute("aria-describedby")).textContent,
						described: document.getElementById(svg.getAttribute("aria-labelledby")).textContent,
						line: line ? getComputedStyle(line).stroke : "",
						background: getComputedStyle(document.body).backgroundColor,
						shrunkAt: shrunk ? shrunk.querySelector("title").textContent : "",
					};
				})()`))
				if err != nil {
					t.Fatal(err)
				}
				if got.Marks != 10 || got.Shrunk != 1 || got.Titles != 10 {
					t.Errorf("%d marks (%d shrunk, %d titled), want 10 (1, 10)", got.Marks, got.Shrunk, got.Titles)
				}
				if got.Width < 200 || got.Width > got.Screen || got.Height < 50 {
					t.Errorf("chart %.0f×%.0f on a screen %.0f wide", got.Width, got.Height, got.Screen)
				}
				if got.Role != "img" || !strings.Contains(got.Described, "over time") ||
					!strings.Contains(got.Summary, "10 backups, from 2024-05-01 to 2024-05-10") ||
					!strings.Contains(got.Summary, "much smaller than those before it") {
					t.Errorf("role %q, label %q, summary %q", got.Role, got.Described, got.Summary)
				}
				if !strings.HasPrefix(got.ShrunkAt, "pg-2024-05-10.sql: 40 B") {
					t.Errorf("the shrunk mark is %q, want the newest dump", got.ShrunkAt)
				}
				if got.Line == "" || got.Line == got.Background {
					t.Errorf("line %q on background %q", got.Line, got.Background)
				}
				lineColor[scheme] = got.Line
				checkLayout(t, ctx)
				browsertest.Screenshot(t, ctx, "chart-"+vp.name+"-"+scheme)
			})
		}
	}
	if lineColor["light"] == lineColor["dark"] {
		t.Errorf("the chart has one colour, %q, in light and dark", lineColor["light"])
	}
	// A folder without backups of its own draws none.
	must(t, os.MkdirAll(filepath.Join(dir, "hosts", "alpha"), 0o700))
	writeBackup(t, filepath.Join(dir, "hosts", "alpha"), "a.tar", "a", base)
	if _, top := get(t, nil, srv.URL+"/backups/hosts/", nil); strings.Contains(top, `class="history"`) {
		t.Error("a folder with subfolders only draws a chart")
	}
	if res, _ := get(t, nil, srv.URL+"/backups/db/", nil); res.StatusCode != http.StatusOK {
		t.Errorf("status %d", res.StatusCode)
	}
}
