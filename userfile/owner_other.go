//go:build !unix

package userfile

import (
	"errors"
	"io/fs"
	"os"
)

// keepOwner does nothing where files have no Unix owner and group; the new
// file inherits the directory's access rules.
func keepOwner(f *os.File, old fs.FileInfo) error { return nil }

// setGroup fails where files have no Unix group: a caller that asked for
// one must not get a file it did not ask for.
func setGroup(f *os.File, gid int) error {
	return errors.New("files have no Unix group on this system")
}
