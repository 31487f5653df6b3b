package catalog

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// folder20k returns a catalog of 20,000 backups, the size at which
// /api/backups must stay fast.
func folder20k(b *testing.B) *Catalog {
	dir := b.TempDir()
	for i := range 20_000 {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("backup-%05d.tar.gz", i)), []byte("x"), 0o600); err != nil {
			b.Fatal(err)
		}
	}
	return New(dir)
}

// BenchmarkList20k lists the folder as /api/backups does (the listing is
// reused while the folder is unchanged).
func BenchmarkList20k(b *testing.B) {
	c := folder20k(b)
	b.ResetTimer()
	for b.Loop() {
		if list, err := c.List(); err != nil || len(list) != 20_000 {
			b.Fatal(len(list), err)
		}
	}
}

// BenchmarkList20kUncached reads the folder every time: the cost the
// listing cache saves.
func BenchmarkList20kUncached(b *testing.B) {
	c := folder20k(b)
	b.ResetTimer()
	for b.Loop() {
		root, err := os.OpenRoot(c.dir)
		if err != nil {
			b.Fatal(err)
		}
		f, _, err := c.readFolder(root, "", "")
		root.Close()
		if err != nil || len(f.Backups) != 20_000 {
			b.Fatal(err)
		}
	}
}
