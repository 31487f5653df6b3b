package metrics

import (
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// BackupFolder is one top-level folder of the catalog as the backup
// metrics see it: its name ("/" for the backups directly inside the
// backups folder) and its newest backup's time (zero: none).
type BackupFolder struct {
	Name   string
	Newest time.Time
	// Shrunk is how many folders at or below it (for "/", the backups
	// folder itself only) hold a newest backup that shrank: empty, or much
	// smaller than those before it ([backups] shrink_ratio).
	Shrunk int
}

// MaxBackupFolders bounds the series of
// backupweb_backups_newest_timestamp_seconds: the first folders by name
// have one each, the rest share folder="(other)" (the newest of them).
const MaxBackupFolders = 100

// OtherFolders is the folder label of the folders past MaxBackupFolders.
const OtherFolders = "(other)"

// WatchBackups exports, read from folders at each scrape,
// backupweb_backups_newest_timestamp_seconds{folder} (a folder without
// backups has no series), backupweb_backups_stale_folders: how many
// top-level folders hold backups of which the newest is older than maxAge
// ([backups] max_age; zero: none is ever stale, and the gauge is 0), and
// backupweb_backups_shrunk_folders: how many folders at any depth hold a
// newest backup that shrank (the sum of BackupFolder.Shrunk). A failed
// reading exports none of them, so an alert on a missing series fires.
func (m *Metrics) WatchBackups(folders func() ([]BackupFolder, error), maxAge func() time.Duration) {
	m.reg.MustRegister(&backupsCollector{folders: folders, maxAge: maxAge, now: time.Now})
}

var (
	newestDesc = prometheus.NewDesc("backupweb_backups_newest_timestamp_seconds",
		"Modification time of the newest backup in each top-level folder of the catalog (\"/\": the backups folder's own files; at most 100 folders, the rest as \"(other)\").",
		[]string{"folder"}, nil)
	staleDesc = prometheus.NewDesc("backupweb_backups_stale_folders",
		"Top-level folders of the catalog whose newest backup is older than [backups] max_age.", nil, nil)
	shrunkDesc = prometheus.NewDesc("backupweb_backups_shrunk_folders",
		"Folders of the catalog, at any depth, whose newest backup is empty or smaller than [backups] shrink_ratio times the median of the shrink_window backups before it.", nil, nil)
)

// backupsCollector is WatchBackups' collector.
type backupsCollector struct {
	folders func() ([]BackupFolder, error)
	maxAge  func() time.Duration // [backups] max_age in force; 0: off
	now     func() time.Time
}

func (c *backupsCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- newestDesc
	ch <- staleDesc
	ch <- shrunkDesc
}

func (c *backupsCollector) Collect(ch chan<- prometheus.Metric) {
	folders, err := c.folders()
	if err != nil {
		return
	}
	shrunk := 0
	for _, f := range folders {
		shrunk += f.Shrunk
	}
	folders = slices.DeleteFunc(slices.Clone(folders), func(f BackupFolder) bool { return f.Newest.IsZero() })
	slices.SortFunc(folders, func(a, b BackupFolder) int { return strings.Compare(a.Name, b.Name) })
	stale := 0
	var other time.Time
	maxAge := c.maxAge()
	for i, f := range folders {
		if maxAge > 0 && c.now().Sub(f.Newest) > maxAge {
			stale++
		}
		if i >= MaxBackupFolders {
			if f.Newest.After(other) {
				other = f.Newest
			}
			continue
		}
		ch <- prometheus.MustNewConstMetric(newestDesc, prometheus.GaugeValue, seconds(f.Newest), f.Name)
	}
	if !other.IsZero() {
		ch <- prometheus.MustNewConstMetric(newestDesc, prometheus.GaugeValue, seconds(other), OtherFolders)
	}
	ch <- prometheus.MustNewConstMetric(staleDesc, prometheus.GaugeValue, float64(stale))
	ch <- prometheus.MustNewConstMetric(shrunkDesc, prometheus.GaugeValue, float64(shrunk))
}

// seconds is t as Unix seconds, with its fraction.
func seconds(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }

// WatchVerify exports backupweb_backups_verify_mismatches, read from
// mismatches at each scrape: the backups, as they are now, whose last
// verification found bytes other than their recorded SHA-256 ([backups]
// verify_every, or backupweb verify). A failed reading exports nothing.
func (m *Metrics) WatchVerify(mismatches func() (int, error)) {
	m.reg.MustRegister(&verifyCollector{mismatches: mismatches})
}

var verifyDesc = prometheus.NewDesc("backupweb_backups_verify_mismatches",
	"Backups whose last verification found bytes other than their recorded SHA-256 (sidecar or SHA256SUMS).", nil, nil)

// verifyCollector is WatchVerify's collector.
type verifyCollector struct {
	mismatches func() (int, error)
}

func (c *verifyCollector) Describe(ch chan<- *prometheus.Desc) { ch <- verifyDesc }

func (c *verifyCollector) Collect(ch chan<- prometheus.Metric) {
	n, err := c.mismatches()
	if err != nil {
		return
	}
	ch <- prometheus.MustNewConstMetric(verifyDesc, prometheus.GaugeValue, float64(n))
}
