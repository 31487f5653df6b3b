package ui

import (
	"strings"
	"testing"
	"time"
)

// TestNewChart: marks placed by date and size inside the drawing area,
// oldest on the left; the newest of many only; the words of the summary.
func TestNewChart(t *testing.T) {
	day0 := time.Date(2024, 5, 1, 2, 0, 0, 0, time.UTC)
	series := func(n int, size func(i int) int64) []ChartPoint { // newest first
		var out []ChartPoint
		for i := n - 1; i >= 0; i-- {
			out = append(out, ChartPoint{Name: "b" + day0.AddDate(0, 0, i).Format("0102"), Size: size(i), At: day0.AddDate(0, 0, i)})
		}
		return out
	}
	if NewChart(nil, 0, false) != nil {
		t.Error("a chart of nothing")
	}
	for _, tt := range []struct {
		name        string
		points      []ChartPoint
		total       int
		shrunk      bool
		marks       int
		first, last [2]string // x, y of the oldest and newest marks
		summary     []string
	}{
		{"one", series(1, func(int) int64 { return 100 }), 1, false, 1, [2]string{"200", "22"}, [2]string{"200", "22"},
			[]string{"1 backup. The newest, b0501 of 2024-05-01 02:00 UTC, is 100 B."}},
		{"growing", series(3, func(i int) int64 { return int64(1000 * (i + 1)) }), 3, false, 3, [2]string{"8", "92.7"}, [2]string{"392", "22"},
			[]string{"3 backups, from 2024-05-01 to 2024-05-03: the smallest 1000 B (b0501), the largest 2.9 KiB (b0503)"}},
		{"empty files", series(2, func(int) int64 { return 0 }), 2, true, 2, [2]string{"8", "128"}, [2]string{"392", "128"},
			[]string{"is 0 B, much smaller than those before it."}},
		{"many", series(130, func(int) int64 { return 5 }), 130, false, MaxChartPoints, [2]string{"8", "22"}, [2]string{"392", "22"},
			[]string{"The newest 120 of 130 backups, from 2024-05-11 to 2024-09-07"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := NewChart(tt.points, tt.total, tt.shrunk)
			if len(c.Marks) != tt.marks {
				t.Fatalf("%d marks, want %d", len(c.Marks), tt.marks)
			}
			first, last := c.Marks[0], c.Marks[len(c.Marks)-1]
			if [2]string{first.X, first.Y} != tt.first || [2]string{last.X, last.Y} != tt.last {
				t.Errorf("oldest at %s,%s, newest at %s,%s; want %v and %v", first.X, first.Y, last.X, last.Y, tt.first, tt.last)
			}
			if last.Shrunk != tt.shrunk || first.Shrunk && len(c.Marks) > 1 {
				t.Errorf("shrunk marks: oldest %v, newest %v", first.Shrunk, last.Shrunk)
			}
			for _, w := range tt.summary {
				if !strings.Contains(c.Summary, w) {
					t.Errorf("summary %q lacks %q", c.Summary, w)
				}
			}
		})
	}
}
