// Package filewatch notices that a file may have changed without reading
// it: a Stamp of what stat tells, and Every, the loop that polls on a
// ticker. The user file, the factors file and the groups file are watched
// with it.
package filewatch

import (
	"context"
	"os"
	"time"
)

// Stamp identifies a version of a file without reading it: what stat
// tells. The zero Stamp stands for a file that could not be stat'ed.
type Stamp struct {
	info os.FileInfo
}

// Stat returns the stamp of the file at path: the zero Stamp when stat
// fails (the error says why).
func Stat(path string) (Stamp, error) {
	info, err := os.Stat(path)
	if err != nil {
		return Stamp{}, err
	}
	return Stamp{info: info}, nil
}

// Of returns the stamp of info, from the Stat of a file already open, so
// that it describes the very bytes read from it.
func Of(info os.FileInfo) Stamp { return Stamp{info: info} }

// Same reports whether a and b describe the same version of the file:
// same inode (an editor's save-by-rename gives a new one), size, mode and
// modification time; or both missing.
func (a Stamp) Same(b Stamp) bool {
	if a.info == nil || b.info == nil {
		return a.info == nil && b.info == nil
	}
	return os.SameFile(a.info, b.info) && a.info.Size() == b.info.Size() &&
		a.info.Mode() == b.info.Mode() && a.info.ModTime().Equal(b.info.ModTime())
}

// RacyWindow is how close to now a modification time must be for a stamp
// not to be trusted: file systems record times at a coarse granularity,
// so a write in the same tick as a read can leave every stat field
// unchanged. Such a file is read again at the next poll (as git does for
// its "racily clean" index entries).
const RacyWindow = 2 * time.Second

// Racy reports whether the file was modified less than RacyWindow ago,
// by the file system's clock (not an injected one: it is compared with
// the file's modification time). A missing file is never racy.
func (a Stamp) Racy() bool {
	return a.info != nil && time.Since(a.info.ModTime()) < RacyWindow
}

// Every calls poll every interval until ctx ends. A non-positive interval
// turns polling off: Every returns at once.
func Every(ctx context.Context, interval time.Duration, poll func()) {
	if interval <= 0 {
		return
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			poll()
		}
	}
}
