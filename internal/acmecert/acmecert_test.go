package acmecert

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestDirCacheMode: the folder is made 0700, and put back to 0700 when
// it was wider.
func TestDirCacheMode(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state", "acme")
	for _, before := range []os.FileMode{0, 0o755} {
		if before != 0 {
			os.Chmod(dir, before)
		}
		if _, err := DirCache(dir); err != nil {
			t.Fatal(err)
		}
		st, err := os.Stat(dir)
		if err != nil || st.Mode().Perm() != 0o700 {
			t.Errorf("mode %v after %o: %v", st.Mode(), before, err)
		}
	}
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, nil, 0o600)
	if _, err := DirCache(file); err == nil {
		t.Error("a file was taken for the certificate folder")
	}
}

// TestHostPolicy: exactly the names of acme_domains, without case and
// without a port.
func TestHostPolicy(t *testing.T) {
	p := hostPolicy([]string{"backups.example.com", "www.example.com"})
	for host, ok := range map[string]bool{
		"backups.example.com": true, "BACKUPS.example.com": true, "backups.example.com:8080": true, "www.example.com": true,
		"example.com": false, "x.backups.example.com": false, "backups.example.com.evil": false, "": false, "127.0.0.1": false,
	} {
		if err := p(context.Background(), host); (err == nil) != ok {
			t.Errorf("%q: %v, want allowed %v", host, err, ok)
		}
	}
}
