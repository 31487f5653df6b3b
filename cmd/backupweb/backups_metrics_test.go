package main

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestServeBackupMetrics: in catalog mode, with max_age, the metrics
// listener exports each top-level folder's newest backup and the number
// of stale folders.
func TestServeBackupMetrics(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	old := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	for _, p := range []string{"backups/db/pg.sql.zst", "backups/web/site.tar"} {
		os.MkdirAll(filepath.Dir(p), 0o700)
		os.WriteFile(p, []byte("x"), 0o600)
	}
	os.Chtimes("backups/db/pg.sql.zst", old, old)
	os.WriteFile("backupweb.ini", []byte("[server]\nlisten = 127.0.0.1:0\nmetrics_listen = 127.0.0.1:0\n[backups]\ndir = backups\nmax_age = 26h\n"), 0o600)
	s := startServe(t, nil)
	defer s.stop()
	m := regexp.MustCompile(`serving metrics" addr=(127\.0\.0\.1:\d+)`).FindStringSubmatch(s.log.String())
	if m == nil {
		t.Fatalf("no metrics listener:\n%s", s.log)
	}
	resp, err := http.Get("http://" + m[1] + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{
		`backupweb_backups_newest_timestamp_seconds{folder="db"} 1.7145648e+09`,
		`backupweb_backups_newest_timestamp_seconds{folder="web"}`,
		"backupweb_backups_stale_folders 1\n",
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %q:\n%s", want, body)
		}
	}
}
