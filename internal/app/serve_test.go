package app

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/backupweb/backupweb/internal/config"
)

// TestConfigFile: the catalog's notice names the file read, absolute, or
// without one the file the program would read (./backupweb.ini), as
// missing.
func TestConfigFile(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	if path, missing := configFile(config.Load("", nil)); path != filepath.Join(dir, config.DefaultPath) || !missing {
		t.Errorf("no file: %q, missing %v; want %q, true", path, missing, filepath.Join(dir, config.DefaultPath))
	}
	os.WriteFile("other.ini", []byte("[server]\n"), 0o600)
	if path, missing := configFile(config.Load("other.ini", nil)); path != filepath.Join(dir, "other.ini") || missing {
		t.Errorf("-config other.ini: %q, missing %v; want %q, false", path, missing, filepath.Join(dir, "other.ini"))
	}
}

// TestBrandIcon: the pages carry backupweb's icon by default, none with
// [ui] product_name set and no icon (a sign-in page in front of another
// application), none with icon = none, and the file of icon when given.
func TestBrandIcon(t *testing.T) {
	dir := t.TempDir()
	svg := filepath.Join(dir, "logo.svg")
	os.WriteFile(svg, []byte(`<svg xmlns="http://www.w3.org/2000/svg"/>`), 0o600)
	for _, tc := range []struct {
		name, ui string
		noIcon   bool
		own      bool
	}{
		{"default", "", false, false},
		{"product_name, no icon", "product_name = Syncthing\n", true, false},
		{"icon none", "icon = none\n", true, false},
		{"product_name and icon", "product_name = Syncthing\nicon = " + svg + "\n", false, true},
	} {
		path := filepath.Join(dir, "backupweb.ini")
		os.WriteFile(path, []byte("[ui]\n"+tc.ui), 0o600)
		cfg := config.Load(path, nil)
		if cfg.Report.HasErrors() {
			t.Fatalf("%s: %v", tc.name, cfg.Report.Err())
		}
		b := brand(cfg)
		if b.NoIcon != tc.noIcon || (b.Icon != nil) != tc.own {
			t.Errorf("%s: NoIcon %v, own icon %v; want %v, %v", tc.name, b.NoIcon, b.Icon != nil, tc.noIcon, tc.own)
		}
	}
}
