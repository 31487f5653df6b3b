package catalog

import (
	"slices"
)

// Shrink is the rule that marks a folder whose newest backup shrank:
// [backups] shrink_ratio and shrink_window.
type Shrink struct {
	// Ratio: the newest backup is shrunk when smaller than Ratio times
	// the median size of the Window backups before it (0: only an empty
	// newest backup is).
	Ratio float64
	// Window is how many backups before the newest one the median is
	// taken over (fewer when the folder holds fewer). Zero turns the rule
	// off.
	Window int
}

// Shrunk reports whether the folder's newest own backup that visible lets
// through (nil: every one) is empty, or smaller than s.Ratio times the
// median size of the s.Window visible backups before it. A folder without
// backups of its own is not shrunk (its subfolders are judged on their
// own), nor is a folder when s.Window is zero. Hidden backups are left
// out of the median too, so the mark tells nothing of them.
func (f *Folder) Shrunk(s Shrink, visible func(path string) bool) bool {
	if s.Window <= 0 {
		return false
	}
	newest := int64(-1)
	prev := make([]int64, 0, min(s.Window, len(f.Backups)))
	for i := range f.Backups {
		b := &f.Backups[i]
		if visible != nil && !visible(f.Path+b.Name) {
			continue
		}
		if newest < 0 {
			newest = b.Size
			continue
		}
		prev = append(prev, b.Size)
		if len(prev) == s.Window {
			break
		}
	}
	switch {
	case newest < 0:
		return false
	case newest == 0:
		return true
	case len(prev) == 0:
		return false
	}
	return float64(newest) < s.Ratio*median(prev)
}

// median returns the median of sizes (not empty), which it sorts.
func median(sizes []int64) float64 {
	slices.Sort(sizes)
	n := len(sizes)
	if n%2 == 1 {
		return float64(sizes[n/2])
	}
	return (float64(sizes[n/2-1]) + float64(sizes[n/2])) / 2
}

// ShrunkFolders counts the folders at or below f whose backups shrank
// under s, hiding nothing: what the metrics report.
func (f *Folder) ShrunkFolders(s Shrink) int {
	n := 0
	f.Walk(func(sub *Folder) {
		if sub.Shrunk(s, nil) {
			n++
		}
	})
	return n
}
