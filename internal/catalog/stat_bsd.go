//go:build darwin || freebsd || netbsd

package catalog

import (
	"io/fs"
	"syscall"
	"time"
)

// statIdentity fills b's Changed and Inode from the stat info carries.
func statIdentity(b *Backup, info fs.FileInfo) {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return
	}
	b.Changed = time.Unix(int64(st.Ctimespec.Sec), int64(st.Ctimespec.Nsec))
	b.Inode = uint64(st.Ino)
}
