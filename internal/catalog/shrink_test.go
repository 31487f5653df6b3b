package catalog

import (
	"strings"
	"testing"
	"time"
)

// TestShrunk: the newest backup against the median of those before it,
// an empty newest backup, too few backups, the window, and hidden
// backups left out.
func TestShrunk(t *testing.T) {
	day := time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)
	folder := func(sizes ...int64) *Folder {
		f := &Folder{Path: "db/"}
		for i, s := range sizes { // newest first
			f.Backups = append(f.Backups, Backup{Name: "b" + string(rune('a'+i)), Size: s, Modified: day.Add(-time.Duration(i) * 24 * time.Hour)})
		}
		return f
	}
	rule := Shrink{Ratio: 0.5, Window: 7}
	hideB := func(p string) bool { return !strings.HasSuffix(p, "/bb") }
	for _, tt := range []struct {
		name    string
		f       *Folder
		s       Shrink
		visible func(string) bool
		want    bool
	}{
		{"steady", folder(100, 100, 100, 100), rule, nil, false},
		{"half is not below half", folder(50, 100, 100, 100), rule, nil, false},
		{"below half", folder(49, 100, 100, 100), rule, nil, true},
		{"empty newest", folder(0, 100), rule, nil, true},
		{"empty alone", folder(0), rule, nil, true},
		{"one backup", folder(5), rule, nil, false},
		{"no backups", folder(), rule, nil, false},
		{"median, not mean", folder(40, 100, 100, 1000000), rule, nil, true},
		{"even count median", folder(60, 100, 140), rule, nil, false},
		{"window bounds the past", folder(40, 50, 2000, 2000, 2000), Shrink{Ratio: 0.5, Window: 1}, nil, false},
		{"window over the past", folder(40, 50, 2000, 2000, 2000), Shrink{Ratio: 0.5, Window: 4}, nil, true},
		{"ratio zero: only empty", folder(1, 1000000), Shrink{Ratio: 0, Window: 7}, nil, false},
		{"window zero: off", folder(0, 100), Shrink{Ratio: 0.5, Window: 0}, nil, false},
		{"hidden newest is not judged", folder(1, 100, 100, 100), rule, func(p string) bool { return !strings.HasSuffix(p, "/ba") }, false},
		{"hidden past is not counted", folder(40, 1000, 60, 60), rule, hideB, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.f.Shrunk(tt.s, tt.visible); got != tt.want {
				t.Fatalf("Shrunk = %v, want %v", got, tt.want)
			}
		})
	}
	top := &Folder{Folders: []*Folder{folder(1, 100), folder(100, 100), folder(0)}}
	if n := top.ShrunkFolders(rule); n != 2 {
		t.Fatalf("ShrunkFolders = %d, want 2", n)
	}
}
