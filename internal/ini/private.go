package ini

import (
	"errors"
	"io/fs"
	"os"
	"os/user"
	"runtime"
	"strconv"

	"github.com/backupweb/backupweb/internal/fspath"
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
			rep.Warnf(path, 0, "", "", "cannot check who may read this file, which holds %s: %v", what, fspath.Cause(err))
		}
		return
	}
	perm := info.Mode().Perm()
	switch {
	case perm&0o037 != 0:
		rep.Warnf(path, 0, "", "", "holds %s but its mode %04o lets others in or its group write or run it; run: chmod 600 %s (or chmod 640, for the service's group %s that only reads it)", what, perm, path, ServiceGroup)
	case perm&0o040 != 0 && !serviceReads(info):
		rep.Warnf(path, 0, "", "", "holds %s but its mode %04o lets its group read it, and that group is not the service's (%s); run: chmod 600 %s, or chgrp %s %s", what, perm, ServiceGroup, path, ServiceGroup, path)
	}
}

// ServiceGroup is the group of the account the packaged service runs as,
// whose read access to a private file CheckPrivate accepts.
const ServiceGroup = "backupweb"

// serviceGroupID looks ServiceGroup up; ok is false when the system has no
// such group. A variable so that tests can name a group of their own.
var serviceGroupID = func() (gid uint32, ok bool) {
	g, err := user.LookupGroup(ServiceGroup)
	if err != nil {
		return 0, false
	}
	n, err := strconv.ParseUint(g.Gid, 10, 32)
	return uint32(n), err == nil
}

// serviceReads reports whether the group of the file info describes is
// the service's: ServiceGroup, or the group this process runs as (the
// service checking its own files).
func serviceReads(info fs.FileInfo) bool {
	gid, ok := fileGroup(info)
	if !ok {
		return true // no Unix groups here: the bits say nothing more
	}
	if svc, ok := serviceGroupID(); ok && gid == svc {
		return true
	}
	return int(gid) == os.Getgid()
}
