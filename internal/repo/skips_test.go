package repo

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// skipsCommand returns the README's command that lists the skipped tests:
// the line of a sh block that runs go test -v and looks for "--- SKIP".
func skipsCommand(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(b)) {
		if strings.HasPrefix(line, "go test -v ./...") && strings.Contains(line, "--- SKIP") {
			return strings.TrimSpace(line)
		}
	}
	t.Fatal("README.md has no command that lists the skipped tests (go test -v ./... ... --- SKIP)")
	return ""
}

// TestSkipsCommandShowsReasons runs the README's command, as pasted, in a
// module whose tests skip the ways ours do (a top-level test, a subtest of
// a parallel test whose SKIP line comes after its parent's PASS, a reason
// of two lines) beside tests that pass and log: each skip is shown with
// its reason, and nothing of the tests that ran.
func TestSkipsCommandShowsReasons(t *testing.T) {
	cmd := skipsCommand(t)
	dir := t.TempDir()
	files := map[string]string{
		"go.mod": "module skipdemo\n\ngo 1.22\n",
		"a_test.go": `package skipdemo

import "testing"

func TestTool(t *testing.T) { t.Skip("redis-server not found (Debian package redis-server)") }

func TestParent(t *testing.T) {
	t.Parallel()
	t.Run("sub", func(t *testing.T) { t.Skip("chromium not found\nDebian package chromium") })
}

func TestRuns(t *testing.T) { t.Log("ran and passed") }

func TestQuiet(t *testing.T) {}
`,
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c := exec.Command("sh", "-c", cmd)
	c.Dir = dir
	c.Env = append(os.Environ(), "GOFLAGS=", "GOWORK=off")
	out, err := c.Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s", cmd, err, out)
	}
	got := string(out)
	for _, want := range []string{
		"redis-server not found (Debian package redis-server)\n--- SKIP: TestTool",
		"chromium not found\n        Debian package chromium\n    --- SKIP: TestParent/sub",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the README's command does not show %q; it printed:\n%s", want, got)
		}
	}
	for _, avoid := range []string{"ran and passed", "--- PASS", "TestQuiet"} {
		if strings.Contains(got, avoid) {
			t.Errorf("the README's command shows %q, which is not a skip; it printed:\n%s", avoid, got)
		}
	}
}
