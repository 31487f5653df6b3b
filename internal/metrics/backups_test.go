package metrics

import (
	"errors"
	"fmt"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// scrape returns the metrics text m serves.
func scrape(t *testing.T, m *Metrics) string {
	t.Helper()
	srv := httptest.NewServer(m.Handler())
	defer srv.Close()
	res, err := srv.Client().Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return string(b)
}

func TestBackupMetrics(t *testing.T) {
	now := time.Now()
	var folders []BackupFolder
	for i := range 150 {
		folders = append(folders, BackupFolder{Name: fmt.Sprintf("host%03d", i), Newest: now.Add(-time.Duration(i) * time.Hour)})
	}
	folders = append(folders, BackupFolder{Name: "/", Newest: now, Shrunk: 1}, BackupFolder{Name: "empty"})
	folders[3].Shrunk = 2
	m := New()
	m.WatchBackups(func() ([]BackupFolder, error) { return folders, nil }, func() time.Duration { return 100 * time.Hour })
	text := scrape(t, m)
	if n := strings.Count(text, "backupweb_backups_newest_timestamp_seconds{"); n != 101 {
		t.Errorf("%d series, want 100 and (other)", n)
	}
	for _, want := range []string{
		`backupweb_backups_newest_timestamp_seconds{folder="/"}`,
		`backupweb_backups_newest_timestamp_seconds{folder="(other)"}`,
		// host100..host149 are older than 100 hours at the scrape.
		"backupweb_backups_stale_folders 50\n",
		"backupweb_backups_shrunk_folders 3\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("missing %q in\n%s", want, text)
		}
	}
	if strings.Contains(text, `folder="empty"`) || strings.Contains(text, `folder="host149"`) {
		t.Error("a folder without backups, or past the hundredth, has its own series")
	}

	broken := New()
	broken.WatchBackups(func() ([]BackupFolder, error) { return nil, errors.New("disk gone") }, func() time.Duration { return time.Hour })
	if text := scrape(t, broken); strings.Contains(text, "backupweb_backups_") {
		t.Error("a failed reading still exports backup metrics")
	}
}

// TestVerifyMetric: the gauge is what the catalog counts at the scrape,
// and absent when it cannot count.
func TestVerifyMetric(t *testing.T) {
	n := 0
	m := New()
	m.WatchVerify(func() (int, error) { return n, nil })
	if text := scrape(t, m); !strings.Contains(text, "backupweb_backups_verify_mismatches 0\n") {
		t.Errorf("missing the zero gauge in\n%s", text)
	}
	n = 3
	if text := scrape(t, m); !strings.Contains(text, "backupweb_backups_verify_mismatches 3\n") {
		t.Errorf("missing the gauge at 3 in\n%s", text)
	}
	broken := New()
	broken.WatchVerify(func() (int, error) { return 0, errors.New("disk gone") })
	if text := scrape(t, broken); strings.Contains(text, "backupweb_backups_verify") {
		t.Error("a failed reading still exports the gauge")
	}
}
