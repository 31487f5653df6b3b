package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/backupweb/backupweb/internal/userfile"
)

// lookupServiceAccount returns the service user (the packaged unit's
// User=), or ok false when there is no such user. A variable so that tests
// can name an account of their own.
var lookupServiceAccount = func() (account, bool) {
	a, err := lookupAccount(serviceUser)
	return a, err == nil
}

// geteuid is os.Geteuid; tests replace it to play root.
var geteuid = os.Geteuid

// newUserFile decides who owns the user file `user add` makes at path when
// it does not exist yet. The file is always made with mode 0600; so that
// the service can read what an administrator makes as root, its owner is:
//
//   - with -owner USER: USER and USER's primary group (root only);
//   - when root makes it in a folder that belongs to the service user's
//     group (the package's /etc/backupweb is root:backupweb 0750): the
//     service user and its group;
//   - otherwise: the caller.
//
// A file that exists keeps its owner, group and mode on every rewrite
// (userfile.Doc.Save); an -owner that differs from its owner is reported
// in note and not applied. note says what was decided, for standard error.
func newUserFile(path, owner string) (nf userfile.NewFile, note string, err error) {
	var want account
	if owner != "" {
		if want, err = lookupAccount(owner); err != nil {
			return nf, "", fmt.Errorf("-owner: %w", err)
		}
	}
	euid := uint32(geteuid())
	target := path
	if t, err := filepath.EvalSymlinks(path); err == nil {
		target = t
	}
	if fi, err := os.Stat(target); err == nil {
		if st, ok := fi.Sys().(*syscall.Stat_t); ok && owner != "" && st.Uid != want.uid {
			note = fmt.Sprintf("warning: -owner %s not applied: %s exists and keeps its owner, group and mode (change them with chown)", want.name, path)
		}
		return nf, note, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nf, "", err // an *fs.PathError, which names the file
	}
	if owner != "" {
		if euid != 0 && want.uid != euid {
			return nf, "", fmt.Errorf("-owner %s: only root can make a file for another user", want.name)
		}
		return userfile.NewFile{UID: int(want.uid), GID: int(want.gid), SetOwner: true},
			fmt.Sprintf("created %s owned by %s, mode 0600", path, want.name), nil
	}
	if euid != 0 {
		return nf, "", nil
	}
	dir, err := os.Stat(filepath.Dir(target))
	if err != nil {
		return nf, "", nil // userAdd has checked the folder; Save reports the rest
	}
	st, ok := dir.Sys().(*syscall.Stat_t)
	svc, found := lookupServiceAccount()
	if !ok || !found || st.Gid != svc.gid {
		return nf, "", nil
	}
	return userfile.NewFile{UID: int(svc.uid), GID: int(svc.gid), SetOwner: true},
		fmt.Sprintf("created %s owned by the service user %s, mode 0600, as its folder belongs to that user's group: the service must read it", path, svc.name), nil
}
