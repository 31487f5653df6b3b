package repo

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestPerformancePageLength: docs/performance.md stays a page a reader
// finishes, at most 200 lines; the history of past measurements lives in
// the commits.
func TestPerformancePageLength(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "performance.md"))
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(b, []byte("\n")); n > 200 {
		t.Errorf("docs/performance.md has %d lines; keep it at most 200", n)
	}
}
