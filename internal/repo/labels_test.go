package repo

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/backupweb/backupweb/internal/metrics"
)

// TestRefusalReasonsDocumented keeps the documented label values of
// backupweb_auth_refused_total equal to the fixed set the program counts:
// every reason is listed, and nothing else is.
func TestRefusalReasonsDocumented(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "operations.md"))
	if err != nil {
		t.Fatal(err)
	}
	const row = "| `reason` (`backupweb_auth_refused_total`) |"
	var line string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, row) {
			line = strings.TrimPrefix(l, row)
		}
	}
	if line == "" {
		t.Fatalf("docs/operations.md has no row starting %q", row)
	}
	documented := map[string]bool{}
	for _, part := range strings.Split(line, "`") {
		if p := strings.TrimSpace(part); p != "" && p != "," && p != "|" {
			documented[p] = true
		}
	}
	for _, r := range metrics.RefusalReasons() {
		if !documented[r] {
			t.Errorf("reason %q is counted but not documented in docs/operations.md", r)
		}
		delete(documented, r)
	}
	for r := range documented {
		t.Errorf("docs/operations.md lists reason %q, which the program never counts", r)
	}
}
