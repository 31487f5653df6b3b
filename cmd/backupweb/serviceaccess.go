package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

// account is the user whose access check-config -as-service checks: its
// ids as the kernel sees them when the service runs.
type account struct {
	name      string
	uid       uint32
	gid       uint32   // primary group
	groupName string   // the primary group's name, for the fixes we print
	gids      []uint32 // every group, the primary one included
}

// lookupAccount finds the user name and its groups (from the system's
// user and group databases).
func lookupAccount(name string) (account, error) {
	u, err := user.Lookup(name)
	if err != nil {
		return account{}, fmt.Errorf("no user %s on this machine: %v", name, err)
	}
	acct := account{name: u.Username, groupName: u.Gid}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err1 != nil || err2 != nil {
		return account{}, fmt.Errorf("user %s has ids %s:%s, which are not numbers", name, u.Uid, u.Gid)
	}
	acct.uid, acct.gid = uint32(uid), uint32(gid)
	if g, err := user.LookupGroupId(u.Gid); err == nil {
		acct.groupName = g.Name
	}
	ids, err := u.GroupIds()
	if err != nil {
		return account{}, fmt.Errorf("cannot list the groups of user %s: %v", name, err)
	}
	acct.gids = []uint32{acct.gid}
	for _, id := range ids {
		if n, err := strconv.ParseUint(id, 10, 32); err == nil && !slices.Contains(acct.gids, uint32(n)) {
			acct.gids = append(acct.gids, uint32(n))
		}
	}
	return acct, nil
}

// need is what the service does with a path.
type need int

const (
	readFile need = iota // open and read a file
	listDir              // list a folder and read the files in it
	writeDir             // create and replace files in a folder (made at start if missing)
)

// permission bits, as in a mode's owner triplet.
const (
	bitR = 4
	bitW = 2
	bitX = 1
)

// bits returns the permission bits a need asks of the path itself.
func (n need) bits() uint32 {
	switch n {
	case listDir:
		return bitR | bitX
	case writeDir:
		return bitW | bitX
	}
	return bitR
}

// statFunc is os.Stat; tests give fabricated results.
type statFunc func(string) (fs.FileInfo, error)

// accessProblem returns "" when acct may do n with path, judged from the
// owner, group and mode of path and of every folder above it (search
// permission), as the kernel would without ACLs. Otherwise it returns a
// sentence naming the file or folder that stops the account and the
// command that fixes it. A path that does not exist is not judged here
// (whoever reads it reports that), except for writeDir, whose nearest
// existing folder must be writable, since the folder is made at start.
func accessProblem(acct account, path string, n need, stat statFunc) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return ""
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	target, want := abs, n.bits()
	fi, err := stat(target)
	for n == writeDir && errors.Is(err, fs.ErrNotExist) && filepath.Dir(target) != target {
		target = filepath.Dir(target)
		fi, err = stat(target)
	}
	if err != nil {
		return ""
	}
	for _, dir := range parents(target) {
		dfi, err := stat(dir)
		if err != nil {
			return fmt.Sprintf("cannot look at the folder %s above it: %v", dir, unwrapPathErr(err))
		}
		if !allowed(acct, dfi, bitX) {
			return fmt.Sprintf("the service user %s cannot enter the folder %s (%s), so cannot reach %s; run: %s",
				acct.name, dir, describe(dfi), path, fix(acct, dir, dfi, bitX))
		}
	}
	if allowed(acct, fi, want) {
		return ""
	}
	what := map[need]string{readFile: "read", listDir: "list", writeDir: "write into"}[n]
	if target != abs {
		return fmt.Sprintf("the service user %s cannot create it: it cannot write into %s (%s); run: %s",
			acct.name, target, describe(fi), fix(acct, target, fi, want))
	}
	return fmt.Sprintf("the service user %s cannot %s it (%s); run: %s", acct.name, what, describe(fi), fix(acct, target, fi, want))
}

// parents lists the folders above path, from the root down.
func parents(path string) []string {
	var dirs []string
	for d := filepath.Dir(path); ; d = filepath.Dir(d) {
		dirs = append(dirs, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	slices.Reverse(dirs)
	return dirs
}

// ids returns the owner and group of fi, and false when the system does
// not say.
func ids(fi fs.FileInfo) (uid, gid uint32, ok bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, false
	}
	return st.Uid, st.Gid, true
}

// allowed applies the kernel's rule: the owner's bits to the owner, else
// the group's bits to a member of the file's group, else the others' bits.
// Root passes, except for x on a file no one may execute (never asked
// here).
func allowed(acct account, fi fs.FileInfo, want uint32) bool {
	if acct.uid == 0 {
		return true
	}
	uid, gid, ok := ids(fi)
	if !ok {
		return true // no Unix owner to judge by
	}
	perm := uint32(fi.Mode().Perm())
	var have uint32
	switch {
	case uid == acct.uid:
		have = perm >> 6 & 7
	case slices.Contains(acct.gids, gid):
		have = perm >> 3 & 7
	default:
		have = perm & 7
	}
	return have&want == want
}

// describe renders "owner:group mode" of fi, with numbers for unknown ids.
func describe(fi fs.FileInfo) string {
	uid, gid, ok := ids(fi)
	if !ok {
		return fmt.Sprintf("mode %04o", fi.Mode().Perm())
	}
	owner, group := strconv.Itoa(int(uid)), strconv.Itoa(int(gid))
	if u, err := user.LookupId(owner); err == nil {
		owner = u.Username
	}
	if g, err := user.LookupGroupId(group); err == nil {
		group = g.Name
	}
	return fmt.Sprintf("%s:%s %04o", owner, group, fi.Mode().Perm())
}

// fix returns the command that gives acct the bits want on path: a chmod
// of the class acct falls in when it owns the file or is in its group,
// else the file is given acct's primary group and that group the bits (the
// owner, usually root, keeps writing it; the service only reads).
func fix(acct account, path string, fi fs.FileInfo, want uint32) string {
	letters := permLetters(want)
	uid, gid, ok := ids(fi)
	switch {
	case ok && uid == acct.uid:
		return fmt.Sprintf("chmod u+%s %s", letters, path)
	case ok && slices.Contains(acct.gids, gid):
		return fmt.Sprintf("chmod g+%s %s", letters, path)
	default:
		return fmt.Sprintf("chgrp %s %s && chmod g+%s %s", acct.groupName, path, letters, path)
	}
}

// permLetters spells bits as chmod does: r, w, x in that order.
func permLetters(bits uint32) string {
	var b strings.Builder
	for _, p := range []struct {
		bit    uint32
		letter string
	}{{bitR, "r"}, {bitW, "w"}, {bitX, "x"}} {
		if bits&p.bit != 0 {
			b.WriteString(p.letter)
		}
	}
	return b.String()
}

// unwrapPathErr drops the operation and path of an *fs.PathError, since the
// message names the path already.
func unwrapPathErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// osStat is the production statFunc.
var osStat statFunc = os.Stat
