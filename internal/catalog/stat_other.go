//go:build !linux && !darwin && !freebsd && !netbsd

package catalog

import "io/fs"

// statIdentity leaves b's Changed at its modification time and Inode at 0:
// without a change time, a rewrite that keeps the size and sets the
// modification time back is not told apart.
func statIdentity(b *Backup, info fs.FileInfo) {}
