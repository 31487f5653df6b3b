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
