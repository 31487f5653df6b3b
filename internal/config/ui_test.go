package config

import (
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
		{"unknown key", "[ui]\nproduct = Syncthing\n", UI{}, "warning: %s:2: [ui] product: unknown key, ignored; known keys are title, product_name"},
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
