package config

import (
	"strings"
	"testing"
	"time"
)

// TestBackupsMaxAge: [backups] max_age is off by default, a duration when
// set, and an error naming the key when it is not one.
func TestBackupsMaxAge(t *testing.T) {
	for _, tt := range []struct {
		line    string
		want    time.Duration
		problem string
	}{
		{"", 0, ""},
		{"max_age = 26h", 26 * time.Hour, ""},
		{"max_age = 90", 90 * time.Second, ""},
		{"max_age = 2 days", 0, "max_age"},
		{"max_age = 0", 0, "max_age"},
	} {
		t.Run(tt.line, func(t *testing.T) {
			cfg := Load(writeConfig(t, "[backups]\ndir = /srv/backups\n"+tt.line+"\n"), lookupEnv)
			problems := cfg.Report.Problems()
			if cfg.Backups.MaxAge != tt.want {
				t.Errorf("MaxAge = %v, want %v", cfg.Backups.MaxAge, tt.want)
			}
			if tt.problem == "" && len(problems) != 0 || tt.problem != "" && (len(problems) != 1 || !strings.Contains(problems[0].String(), tt.problem)) {
				t.Errorf("problems %v, want one naming %q", problems, tt.problem)
			}
		})
	}
}
