package web

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/catalog"
)

// TestShrunkFolderMarked: a folder whose newest dump is a fraction of the
// ones before it, and one whose newest dump is empty, are marked on their
// page, on their rows in the parent's page and in JSON; a steady folder is
// not.
func TestShrunkFolderMarked(t *testing.T) {
	dir := t.TempDir()
	write := func(folder string, sizes ...int) {
		must(t, os.MkdirAll(filepath.Join(dir, folder), 0o700))
		for i, n := range sizes { // oldest first
			writeBackup(t, filepath.Join(dir, folder), "dump-"+string(rune('a'+i))+".sql", strings.Repeat("x", n), base.Add(time.Duration(i)*24*time.Hour))
		}
	}
	write("db", 2000, 2100, 1900, 2050, 30)
	write("empty", 500, 500, 0)
	write("steady", 2000, 2100, 1900, 2050, 1990)
	srv := treeServer(t, dir, Options{Shrink: catalog.Shrink{Ratio: 0.5, Window: 7}})

	for _, tc := range []struct {
		folder string
		want   bool
	}{{"db", true}, {"empty", true}, {"steady", false}} {
		_, page := get(t, nil, srv.URL+"/backups/"+tc.folder+"/", nil)
		if got := strings.Contains(page, `id="shrunk"`) && strings.Contains(page, `badge shrunk`); got != tc.want {
			t.Errorf("%s: page marked %v, want %v", tc.folder, got, tc.want)
		}
		res, body := get(t, nil, srv.URL+"/api/backups?path="+tc.folder+"/", nil)
		var out struct {
			Shrunk *bool `json:"shrunk"`
		}
		if res.StatusCode != http.StatusOK || json.Unmarshal([]byte(body), &out) != nil {
			t.Fatalf("%s: %d %s", tc.folder, res.StatusCode, body)
		}
		if got := out.Shrunk != nil && *out.Shrunk; got != tc.want {
			t.Errorf("%s: JSON shrunk %v, want %v: %s", tc.folder, got, tc.want, body)
		}
	}
	_, body := get(t, nil, srv.URL+"/api/backups?path=", nil)
	var top struct {
		Shrunk  bool `json:"shrunk"`
		Folders []struct {
			Name   string `json:"name"`
			Shrunk bool   `json:"shrunk"`
		} `json:"folders"`
	}
	must(t, json.Unmarshal([]byte(body), &top))
	got := map[string]bool{}
	for _, f := range top.Folders {
		got[f.Name] = f.Shrunk
	}
	if top.Shrunk || !got["db"] || !got["empty"] || got["steady"] {
		t.Errorf("top listing %s", body)
	}
	_, page := get(t, nil, srv.URL+"/", nil)
	if n := strings.Count(page, `badge shrunk`); n != 2 {
		t.Errorf("the top page marks %d rows shrunk, want 2", n)
	}
}
