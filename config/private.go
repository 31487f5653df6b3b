package config

import (
	"errors"
	"io/fs"
	"os"
	"runtime"
)

// CheckPrivate records a warning in rep when the file at path can be
// written by its group or read or written by others, saying what the file
// holds (what, for example "a password hash") and how to fix it ("chmod 640
// PATH"). Read access for the file's group alone is accepted: that is how
// the service's account reads a file root keeps (the Debian package's
// root:backupweb 0640). A warning rather than an error keeps deployments
// that guard the directory instead working.
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
	if perm := info.Mode().Perm(); perm&0o037 != 0 {
		rep.Warnf(path, 0, "", "", "holds %s but its mode %04o lets others in or its group write or run it; run: chmod 600 %s (or chmod 640, for a group that only reads it)", what, perm, path)
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
