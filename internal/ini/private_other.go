//go:build !unix

package ini

import "io/fs"

// fileGroup says that files have no Unix group here.
func fileGroup(fs.FileInfo) (uint32, bool) { return 0, false }
