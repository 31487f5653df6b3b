package metrics

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/backupweb/backupweb/internal/testkit/toolstest"
)

// alertRules returns the Prometheus rule file docs/operations.md gives
// under "Alerting when backups stop arriving": its first yaml block.
func alertRules(t *testing.T) string {
	t.Helper()
	doc, err := os.ReadFile("../../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(doc), "### Alerting when backups stop arriving")
	if !ok {
		t.Fatal("docs/operations.md has no section on alerting when backups stop arriving")
	}
	_, block, ok := strings.Cut(section, "```yaml\n")
	if !ok {
		t.Fatal("the alerting section has no yaml block")
	}
	block, _, ok = strings.Cut(block, "```")
	if !ok {
		t.Fatal("the alerting section's yaml block does not end")
	}
	return block
}

// ruleTests are promtool unit tests of the documented rules: a folder
// that stops receiving backups pages, one that keeps receiving them does
// not, a catalog that exports nothing pages too, and a shrunk backup
// pages when it stays shrunk for 30 minutes (not while it is written).
const ruleTests = `rule_files:
  - rules.yml
evaluation_interval: 1m
tests:
  - interval: 1m
    input_series:
      - series: 'backupweb_backups_stale_folders{instance="b:9464",job="backupweb"}'
        values: '0x10 1x30'
      - series: 'backupweb_backups_newest_timestamp_seconds{folder="db",instance="b:9464",job="backupweb"}'
        values: '0x60'
      - series: 'backupweb_backups_newest_timestamp_seconds{folder="web",instance="b:9464",job="backupweb"}'
        values: '0+60x60'
    alert_rule_test:
      - eval_time: 5m
        alertname: BackupsStale
        exp_alerts: []
      - eval_time: 30m
        alertname: BackupsStale
        exp_alerts:
          - exp_labels: {severity: page, instance: "b:9464", job: backupweb}
            exp_annotations:
              summary: "1 backup folder(s) on b:9464 have had no new backup for longer than max_age"
      - eval_time: 30m
        alertname: BackupCatalogUnread
        exp_alerts: []
  - interval: 1m
    input_series:
      - series: 'backupweb_backups_newest_timestamp_seconds{folder="db",instance="b:9464",job="backupweb"}'
        values: '0x1700'
      - series: 'backupweb_backups_newest_timestamp_seconds{folder="web",instance="b:9464",job="backupweb"}'
        values: '0+60x1700'
    alert_rule_test:
      - eval_time: 1680m
        alertname: BackupFolderSilent
        exp_alerts:
          - exp_labels: {severity: page, folder: db, instance: "b:9464", job: backupweb}
            exp_annotations:
              summary: "No new backup in db on b:9464 for 1d 4h 0m 0s"
      - eval_time: 20m
        alertname: BackupCatalogUnread
        exp_alerts:
          - exp_labels: {severity: page}
            exp_annotations:
              summary: "backupweb exports no backup metrics: the catalog cannot be read, or metrics_listen is off"
  - interval: 1m
    input_series:
      - series: 'backupweb_backups_shrunk_folders{instance="b:9464",job="backupweb"}'
        values: '0x10 1x10 0x10 2x60'
      - series: 'backupweb_backups_verify_mismatches{instance="b:9464",job="backupweb"}'
        values: '0x50 1x50'
      - series: 'backupweb_backups_stale_folders{instance="b:9464",job="backupweb"}'
        values: '0x100'
    alert_rule_test:
      - eval_time: 25m
        alertname: BackupShrunk
        exp_alerts: []
      - eval_time: 45m
        alertname: BackupShrunk
        exp_alerts: []
      - eval_time: 70m
        alertname: BackupShrunk
        exp_alerts:
          - exp_labels: {severity: page, instance: "b:9464", job: backupweb}
            exp_annotations:
              summary: "2 backup folder(s) on b:9464 hold a newest backup that is empty or much smaller than those before it"
      - eval_time: 45m
        alertname: BackupChecksumMismatch
        exp_alerts: []
      - eval_time: 51m
        alertname: BackupChecksumMismatch
        exp_alerts:
          - exp_labels: {severity: page, instance: "b:9464", job: backupweb}
            exp_annotations:
              summary: "1 backup(s) on b:9464 no longer match their recorded SHA-256: run backupweb verify"
`

// TestAlertRuleDocumented runs promtool over the alert rules of
// docs/operations.md as they stand: they load, and they page when backups
// stop arriving.
func TestAlertRuleDocumented(t *testing.T) {
	rules := alertRules(t)
	promtool := toolstest.Need(t, "promtool", "prometheus")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "rules.yml"), []byte(rules), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tests.yml"), []byte(ruleTests), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"check", "rules", "rules.yml"}, {"test", "rules", "tests.yml"}} {
		cmd := exec.Command(promtool, args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}
