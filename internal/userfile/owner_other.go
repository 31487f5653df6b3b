//go:build !unix

package userfile

import (
	"io/fs"
	"os"
)

// keepOwner does nothing where files have no Unix owner and group; the new
// file inherits the directory's access rules.
func keepOwner(f *os.File, old fs.FileInfo) error { return nil }
