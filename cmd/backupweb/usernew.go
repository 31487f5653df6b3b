package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"

	"github.com/backupweb/backupweb/userfile"
)

// readableNewFileMode is the mode of a user file made for a service group:
// its owner (root, usually) writes it, the group reads it, nobody else.
const readableNewFileMode fs.FileMode = 0o640

// lookupServiceGroup returns the primary group of the service user (the
// packaged unit's User=), or ok false when there is no such user. A
// variable so that tests can name a group of their own.
var lookupServiceGroup = func() (gid int, name string, ok bool) {
	u, err := user.Lookup(serviceUser)
	if err != nil {
		return 0, "", false
	}
	return groupOf(u.Gid)
}

// groupOf resolves a numeric group id to its number and name.
func groupOf(id string) (gid int, name string, ok bool) {
	gid, err := strconv.Atoi(id)
	if err != nil {
		return 0, "", false
	}
	name = id
	if g, err := user.LookupGroupId(id); err == nil {
		name = g.Name
	}
	return gid, name, true
}

// lookupGroup resolves the -group flag: a group name, or a number.
func lookupGroup(name string) (gid int, display string, err error) {
	g, err := user.LookupGroup(name)
	if err != nil {
		if _, numErr := strconv.Atoi(name); numErr != nil {
			return 0, "", fmt.Errorf("-group: no group %q on this system", name)
		}
		if g, err = user.LookupGroupId(name); err != nil {
			return 0, "", fmt.Errorf("-group: no group with id %s on this system", name)
		}
	}
	gid, display, _ = groupOf(g.Gid)
	return gid, display, nil
}

// newUserFile decides how `user add` makes the user file at path when it
// does not exist yet, so that the service can read what an administrator
// makes as root:
//
//   - with -group NAME: group NAME, mode 0640;
//   - when the file's folder belongs to the service user's group (the
//     package's /etc/backupweb is root:backupweb 0750): that group, mode
//     0640, owner the caller;
//   - otherwise: mode 0600, owned by the caller.
//
// A file that exists keeps its owner, group and mode on every rewrite
// (userfile.Doc.Save); a -group that differs from its group is reported in
// note and not applied. note says what was decided, for standard error.
func newUserFile(path, group string) (nf userfile.NewFile, note string, err error) {
	target := path
	if t, err := filepath.EvalSymlinks(path); err == nil {
		target = t
	}
	if fi, err := os.Stat(target); err == nil {
		if group != "" {
			gid, name, err := lookupGroup(group)
			if err != nil {
				return nf, "", err
			}
			if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Gid) != gid {
				note = fmt.Sprintf("warning: -group %s not applied: %s exists and keeps its owner, group and mode (change them with chgrp and chmod)", name, path)
			}
		}
		return nf, note, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nf, "", err // an *fs.PathError, which names the file
	}
	if group != "" {
		gid, name, err := lookupGroup(group)
		if err != nil {
			return nf, "", err
		}
		return userfile.NewFile{Mode: readableNewFileMode, Group: gid, SetGroup: true},
			fmt.Sprintf("created %s with group %s, mode 0640", path, name), nil
	}
	dir, err := os.Stat(filepath.Dir(target))
	if err != nil {
		return nf, "", nil // userAdd has checked the folder; Save reports the rest
	}
	st, ok := dir.Sys().(*syscall.Stat_t)
	gid, name, found := lookupServiceGroup()
	if !ok || !found || int(st.Gid) != gid {
		return nf, "", nil
	}
	return userfile.NewFile{Mode: readableNewFileMode, Group: gid, SetGroup: true},
		fmt.Sprintf("created %s with group %s, mode 0640, as its folder belongs to the group of the service user %s, which must read it", path, name, serviceUser), nil
}
