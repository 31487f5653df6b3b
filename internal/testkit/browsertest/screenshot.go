package browsertest

import (
	"bytes"
	"context"
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"
)

// Screenshot takes a full-page screenshot of the page ctx shows, checks
// that it is a real, non-blank image (a PNG of at least 300×200 with more
// than two colours) and saves it as NAME.png under the test's folder, and
// under BACKUPWEB_SCREENSHOT_DIR when that is set.
func Screenshot(t testing.TB, ctx context.Context, name string) {
	t.Helper()
	b, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot of the %s page: %v", name, err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("screenshot of the %s page is not a PNG: %v", name, err)
	}
	colors := map[[4]uint32]bool{}
	bounds := img.Bounds()
	for y := bounds.Min.Y; y < bounds.Max.Y; y += 5 {
		for x := bounds.Min.X; x < bounds.Max.X; x += 5 {
			r, g, bl, a := img.At(x, y).RGBA()
			colors[[4]uint32{r, g, bl, a}] = true
		}
	}
	if bounds.Dx() < 300 || bounds.Dy() < 200 || len(colors) < 3 {
		t.Errorf("screenshot of the %s page looks blank: %v, %d colours", name, bounds, len(colors))
	}
	dirs := []string{t.TempDir()}
	if d := os.Getenv("BACKUPWEB_SCREENSHOT_DIR"); d != "" {
		dirs = append(dirs, d)
	}
	for _, d := range dirs {
		p := filepath.Join(d, name+".png")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatalf("save screenshot: %v", err)
		}
		t.Logf("screenshot: %s", p)
	}
}
