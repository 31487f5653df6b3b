//go:build unix

package userfile

import (
	"io/fs"
	"os"
	"syscall"
)

// keepOwner gives f the owner and group of old when they differ from its
// own. Changing them needs privilege (or, for the group, membership), so a
// failure here means the replacement would change who may read the file.
func keepOwner(f *os.File, old fs.FileInfo) error {
	want, ok := old.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	have, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || (have.Uid == want.Uid && have.Gid == want.Gid) {
		return nil
	}
	return f.Chown(int(want.Uid), int(want.Gid))
}
