package qr

import (
	"strings"
	"testing"
)

func TestMatrixAndDrawings(t *testing.T) {
	uri := "otpauth://totp/backupweb:alice?algorithm=SHA1&digits=6&issuer=backupweb&period=30&secret=JBSWY3DPEHPK3PXP"
	m, err := Matrix(uri)
	if err != nil {
		t.Fatal(err)
	}
	n := len(m)
	if n < 21+2*quiet || len(m[0]) != n {
		t.Fatalf("matrix %dx%d", n, len(m[0]))
	}
	// The finder pattern: a dark 7x7 square outline at the top left.
	for i := range 7 {
		for _, c := range [][2]int{{0, i}, {6, i}, {i, 0}, {i, 6}} {
			if !m[quiet+c[1]][quiet+c[0]] {
				t.Fatalf("finder pattern module %v is light", c)
			}
		}
	}
	for x := range n {
		if m[0][x] || m[n-1][x] {
			t.Fatal("the quiet margin has a dark module")
		}
	}
	text := HalfBlocks(m)
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	if len(lines) != (n+1)/2 {
		t.Errorf("%d lines for %d rows", len(lines), n)
	}
	for _, l := range lines {
		if len([]rune(l)) != n {
			t.Fatalf("line of %d characters, want %d", len([]rune(l)), n)
		}
	}
	if !strings.Contains(text, "█") || !strings.Contains(text, " ") {
		t.Error("the drawing has no light or no dark cell")
	}
	svg := SVG(m, `QR "code" <x>`)
	for _, want := range []string{"<svg", `aria-label="QR &#34;code&#34; &lt;x&gt;"`, "M4 4h1v1h-1z", "</svg>"} {
		if !strings.Contains(svg, want) {
			t.Errorf("SVG lacks %q", want)
		}
	}
}
