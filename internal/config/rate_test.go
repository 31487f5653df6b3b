package config

import (
	"strings"
	"testing"
)

// TestParseRate: the spellings of a read rate, and what is refused.
func TestParseRate(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want int64 // 0: refused
	}{
		{"50MB/s", 50_000_000},
		{"50mb/s", 50_000_000},
		{"200MiB/s", 200 << 20},
		{"1.5 GB/s", 1_500_000_000},
		{"1000", 1000},
		{"64KiB", 64 << 10},
		{"10B/s", 10},
		{"0", 0},
		{"-1MB/s", 0},
		{"MB/s", 0},
		{"1e3", 0},
		{"5 TB/s", 0},
		{"0.1B/s", 0},
		{"fast", 0},
		{"", 0},
	} {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseRate(tt.in)
			if tt.want == 0 {
				if err == nil {
					t.Fatalf("ParseRate(%q) = %d, want an error", tt.in, got)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("ParseRate(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
			}
		})
	}
}

// FuzzParseRate: any text gives an error or a rate from 1 byte to 1 TB
// per second.
func FuzzParseRate(f *testing.F) {
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseRate(s)
		if err == nil && (n < 1 || n > 1e12) {
			t.Fatalf("ParseRate(%q) = %d", s, n)
		}
	})
}

// TestBackupsGlanceKeys: shrink_ratio, shrink_window, verify_every and
// verify_rate have their defaults, read their values, and name the key
// when wrong.
func TestBackupsGlanceKeys(t *testing.T) {
	for _, tt := range []struct {
		line    string
		check   func(Backups) bool
		problem string
	}{
		{"", func(b Backups) bool {
			return b.ShrinkRatio == 0.5 && b.ShrinkWindow == 7 && b.VerifyEvery == 0 && b.VerifyRate == 50_000_000
		}, ""},
		{"shrink_ratio = 0.25", func(b Backups) bool { return b.ShrinkRatio == 0.25 }, ""},
		{"shrink_ratio = 0", func(b Backups) bool { return b.ShrinkRatio == 0 }, ""},
		{"shrink_ratio = 1.5", func(b Backups) bool { return b.ShrinkRatio == 0.5 }, "shrink_ratio"},
		{"shrink_ratio = NaN", func(b Backups) bool { return b.ShrinkRatio == 0.5 }, "shrink_ratio"},
		{"shrink_window = 30", func(b Backups) bool { return b.ShrinkWindow == 30 }, ""},
		{"shrink_window = 0", func(b Backups) bool { return b.ShrinkWindow == 7 }, "shrink_window"},
		{"verify_every = 24h", func(b Backups) bool { return b.VerifyEvery.Hours() == 24 }, ""},
		{"verify_every = 10s", func(b Backups) bool { return b.VerifyEvery == 0 }, "verify_every"},
		{"verify_rate = 10MiB/s", func(b Backups) bool { return b.VerifyRate == 10<<20 }, ""},
		{"verify_rate = quick", func(b Backups) bool { return b.VerifyRate == 50_000_000 }, "verify_rate"},
	} {
		t.Run(tt.line, func(t *testing.T) {
			cfg := Load(writeConfig(t, "[backups]\ndir = /srv/backups\n"+tt.line+"\n"), lookupEnv)
			problems := cfg.Report.Problems()
			if !tt.check(cfg.Backups) {
				t.Errorf("Backups = %+v", cfg.Backups)
			}
			if tt.problem == "" && len(problems) != 0 || tt.problem != "" && (len(problems) != 1 || !strings.Contains(problems[0].String(), tt.problem)) {
				t.Errorf("problems %v, want one naming %q", problems, tt.problem)
			}
		})
	}
}
