package config

import (
	"errors"
	"io/fs"
	"os"
	"runtime"
)

// CheckPrivate records a warning in rep when the file at path can be read or
// written by its group or by others, saying what the file holds (what, for
// example "a password hash") and how to fix it ("chmod 600 PATH"). The
// configuration file and the user file should be readable only by their
// owner; a warning rather than an error keeps
// deployments that guard the directory instead working.
//
// A missing file is not reported here (whoever reads it reports that); any
// other failure to inspect it is a warning. On Windows, where permission bits
// do not describe access, it does nothing. It does not look at the file's
// owner or at the directories above it.
func CheckPrivate(rep *Report, path, what string) {
	if runtime.GOOS == "windows" {
		return
	}
	info, err := os.Stat(path)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			rep.Warnf(path, 0, "", "", "cannot check who may read this file, which holds %s: %v", what, unwrapPath(err))
		}
		return
	}
	if perm := info.Mode().Perm(); perm&0o077 != 0 {
		rep.Warnf(path, 0, "", "", "holds %s but its mode %04o lets group or others read or write it; run: chmod 600 %s", what, perm, path)
	}
}

// unwrapPath drops the operation and path from an *fs.PathError, since the
// problem already names the file.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
