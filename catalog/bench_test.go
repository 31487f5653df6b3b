package catalog

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkList20k lists a folder of 20,000 backups, the size at which
// /api/backups must stay fast.
func BenchmarkList20k(b *testing.B) {
	dir := b.TempDir()
	for i := range 20_000 {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("backup-%05d.tar.gz", i)), []byte("x"), 0o600); err != nil {
			b.Fatal(err)
		}
	}
	c := New(dir)
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
	dir := b.TempDir()
	for i := range 20_000 {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("backup-%05d.tar.gz", i)), []byte("x"), 0o600); err != nil {
			b.Fatal(err)
		}
	}
	c := New(dir)
	b.ResetTimer()
	for b.Loop() {
		if list, err := c.read(); err != nil || len(list) != 20_000 {
			b.Fatal(len(list), err)
		}
	}
}
