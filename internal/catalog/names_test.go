package catalog

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNonUTF8NamesLeftOut: a name that is not valid UTF-8 could not be
// asked for by any client, so it is neither listed nor served, and it is
// logged once.
func TestNonUTF8NamesLeftOut(t *testing.T) {
	dir := t.TempDir()
	bad := "backup-\xff\xfe.tar"
	for _, name := range []string{bad, "good.tar"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("x"), 0o600); err != nil {
			t.Skipf("this file system refuses the name: %v", err)
		}
	}
	var logs strings.Builder
	c := New(dir).WithLogger(slog.New(slog.NewTextHandler(&logs, nil)))
	for range 3 {
		list, err := c.List()
		if err != nil || len(list) != 1 || list[0].Name != "good.tar" {
			t.Fatalf("List = %v, %v; want only good.tar", list, err)
		}
		c.last.Store(nil) // read the folder again, as after a change
	}
	if n := strings.Count(logs.String(), "not valid UTF-8"); n != 1 {
		t.Fatalf("want the name logged once, got %d:\n%s", n, logs.String())
	}
	if !strings.Contains(logs.String(), `\xff\xfe`) {
		t.Errorf("the log does not show the name escaped:\n%s", logs.String())
	}
	if _, _, err := c.Open(bad); err != ErrNotFound {
		t.Errorf("Open of the unlisted name: %v, want ErrNotFound", err)
	}
}
