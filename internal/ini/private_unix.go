//go:build unix

package ini

import (
	"io/fs"
	"syscall"
)

// fileGroup returns the group id of the file info describes.
func fileGroup(info fs.FileInfo) (uint32, bool) {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return st.Gid, true
}
