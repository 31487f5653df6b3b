package config

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoadUI(t *testing.T) {
	for _, tc := range []struct {
		name    string
		body    string
		want    UI
		problem string // part of the one problem expected, "" for none
	}{
		{"absent", "", UI{}, ""},
		{"both", "[ui]\ntitle = Home NAS\nproduct_name = Syncthing\n", UI{Title: "Home NAS", ProductName: "Syncthing"}, ""},
		{"trimmed", "[ui]\nproduct_name =   Syncthing  \n", UI{ProductName: "Syncthing"}, ""},
		{"too long", "[ui]\ntitle = " + strings.Repeat("x", 81) + "\n", UI{}, "error: " + "%s:2: [ui] title: is longer than 80 characters"},
		{"control character", "[ui]\nproduct_name = Sync\x1bthing\n", UI{}, "[ui] product_name: holds control characters"},
		{"unknown key", "[ui]\nproduct = Syncthing\n", UI{}, "warning: %s:2: [ui] product: unknown key, ignored; known keys are title, product_name, icon"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := writeConfig(t, tc.body)
			cfg := Load(path, func(string) (string, bool) { return "", false })
			if cfg.UI != tc.want {
				t.Errorf("UI = %+v, want %+v", cfg.UI, tc.want)
			}
			var got []string
			for _, p := range cfg.Report.Problems() {
				got = append(got, p.String())
			}
			switch {
			case tc.problem == "" && len(got) != 0:
				t.Errorf("problems %q, want none", got)
			case tc.problem != "" && (len(got) != 1 || !strings.Contains(got[0], strings.ReplaceAll(tc.problem, "%s", path))):
				t.Errorf("problems %q, want one holding %q", got, tc.problem)
			}
		})
	}
}

// TestLoadUIIcon: [ui] icon names an SVG or PNG file of at most 64 KiB,
// read at load, or none; any other value is an error at the key naming
// the file.
func TestLoadUIIcon(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, size int) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, bytes.Repeat([]byte("x"), size), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	svg, png := write("logo.svg", 100), write("logo.PNG", MaxIconSize)
	for _, tc := range []struct {
		name, value, wantType, problem string
	}{
		{"svg", svg, "image/svg+xml", ""},
		{"png at the limit, extension in capitals", png, "image/png", ""},
		{"none", "none", "", ""},
		{"too large", write("big.svg", MaxIconSize+1), "", "big.svg is larger than 64 KiB"},
		{"missing", filepath.Join(dir, "gone.svg"), "", "[ui] icon: cannot read " + filepath.Join(dir, "gone.svg") + ": no such file or directory"},
		{"another type", write("logo.gif", 10), "", "logo.gif is neither .svg nor .png"},
		{"empty", write("empty.png", 0), "", "empty.png is empty"},
		{"a directory", func() string { p := filepath.Join(dir, "d.svg"); os.Mkdir(p, 0o700); return p }(), "", "d.svg is a directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Load(writeConfig(t, "[ui]\nicon = "+tc.value+"\n"), func(string) (string, bool) { return "", false })
			var got []string
			for _, p := range cfg.Report.Problems() {
				got = append(got, p.String())
			}
			switch {
			case tc.problem == "" && len(got) != 0:
				t.Errorf("problems %q, want none", got)
			case tc.problem != "" && (len(got) != 1 || !strings.Contains(got[0], tc.problem) || !strings.HasPrefix(got[0], "error:")):
				t.Errorf("problems %q, want one error holding %q", got, tc.problem)
			}
			if cfg.UI.Icon != tc.value {
				t.Errorf("Icon = %q, want %q", cfg.UI.Icon, tc.value)
			}
			switch f := cfg.UI.IconFile; {
			case tc.wantType == "" && f != nil:
				t.Errorf("IconFile = %s, want none", f.Type)
			case tc.wantType != "" && (f == nil || f.Type != tc.wantType || len(f.Body) == 0):
				t.Errorf("IconFile = %+v, want a %s", f, tc.wantType)
			}
		})
	}
}
