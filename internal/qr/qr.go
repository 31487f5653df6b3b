// Package qr draws QR codes for enrolling an authenticator app: as text
// with half-block characters for a terminal, and as inline SVG for a page
// (the pages' Content-Security-Policy allows no data: images). The matrix
// comes from github.com/boombuler/barcode, which github.com/pquerna/otp
// uses for the same purpose.
package qr

import (
	"fmt"
	"strings"

	"github.com/boombuler/barcode"
	"github.com/boombuler/barcode/qr"
)

// quiet is the width of the blank margin around the code, in modules, as
// the QR specification asks for.
const quiet = 4

// Matrix returns the QR code of text (error correction level M) as rows
// of modules, true for dark, with the quiet margin included.
func Matrix(text string) ([][]bool, error) {
	code, err := qr.Encode(text, qr.M, qr.Auto)
	if err != nil {
		return nil, fmt.Errorf("qr: encoding: %w", err)
	}
	return matrixOf(code), nil
}

func matrixOf(code barcode.Barcode) [][]bool {
	b := code.Bounds()
	n := b.Dx() + 2*quiet
	m := make([][]bool, n)
	for y := range m {
		m[y] = make([]bool, n)
	}
	for y := 0; y < b.Dy(); y++ {
		for x := 0; x < b.Dx(); x++ {
			r, _, _, _ := code.At(b.Min.X+x, b.Min.Y+y).RGBA()
			m[y+quiet][x+quiet] = r < 0x8000
		}
	}
	return m
}

// HalfBlocks draws m for a terminal: two rows of modules per line of text,
// with the characters "█", "▀", "▄" and space. Light modules are drawn
// (painted in the foreground colour) and dark ones left blank (the
// background), so the caller should print it light on dark (the `user
// totp` command sets bright white on black for each line).
func HalfBlocks(m [][]bool) string {
	var b strings.Builder
	for y := 0; y < len(m); y += 2 {
		for x := range m[y] {
			top := !m[y][x]
			bottom := y+1 < len(m) && !m[y+1][x]
			switch {
			case top && bottom:
				b.WriteString("█")
			case top:
				b.WriteString("▀")
			case bottom:
				b.WriteString("▄")
			default:
				b.WriteString(" ")
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}

// SVG draws m as an SVG image, one path of unit squares, scaled by the
// viewer. title is its accessible name. The result is safe to put in an
// HTML page as it is: it contains nothing from text but the modules.
func SVG(m [][]bool, title string) string {
	var b strings.Builder
	n := len(m)
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d %d" class="qr" role="img" aria-label="%s" shape-rendering="crispEdges">`, n, n, escape(title))
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="#fff"/><path fill="#000" d="`, n, n)
	for y, row := range m {
		for x, dark := range row {
			if dark {
				fmt.Fprintf(&b, "M%d %dh1v1h-1z", x, y)
			}
		}
	}
	b.WriteString(`"/></svg>`)
	return b.String()
}

// escape makes s safe inside a double-quoted attribute.
func escape(s string) string {
	r := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&#34;", "'", "&#39;")
	return r.Replace(s)
}
