package browsertest

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// Screenshot saves a full-page PNG of the current page as name.png under
// the test's temporary folder and, when BACKUPWEB_SCREENSHOT_DIR is set,
// there too, for a person to look at.
func Screenshot(t testing.TB, ctx context.Context, name string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	if len(png) < 8 || string(png[1:4]) != "PNG" {
		t.Fatalf("screenshot %s: not a PNG", name)
	}
	dirs := []string{t.TempDir()}
	if d := os.Getenv("BACKUPWEB_SCREENSHOT_DIR"); d != "" {
		dirs = append(dirs, d)
	}
	for _, d := range dirs {
		p := filepath.Join(d, name+".png")
		if err := os.WriteFile(p, png, 0o644); err != nil {
			t.Fatalf("save screenshot: %v", err)
		}
		t.Logf("screenshot: %s", p)
	}
}

// CheckStyled asserts what a screenshot is checked for: the page's one
// stylesheet was applied (the Content-Security-Policy let it through, the
// body has the stylesheet's font) and nothing is wider than the screen.
func CheckStyled(t testing.TB, ctx context.Context) {
	t.Helper()
	sheets, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.styleSheets.length`))
	if err != nil || sheets != 1 {
		t.Errorf("stylesheets loaded = %d, %v; want 1", sheets, err)
	}
	font, err := chromedp.Run(ctx, chromedp.Evaluate[string](`getComputedStyle(document.body).fontFamily`))
	if err != nil || !strings.Contains(font, "system-ui") {
		t.Errorf("body font = %q, %v: stylesheet not applied", font, err)
	}
	overflow, err := chromedp.Run(ctx, chromedp.Evaluate[bool](
		`document.documentElement.scrollWidth > document.documentElement.clientWidth`))
	if err != nil || overflow {
		t.Errorf("page wider than the screen: %v, %v", overflow, err)
	}
}
