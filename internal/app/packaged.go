package app

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Packaged names the files of the Debian package (packaging/): the
// configuration it installs, and the environment file holding
// BACKUP_SECRET_KEY that it makes once and that the unit loads with
// EnvironmentFile=. The zero value names none: no package.
type Packaged struct {
	// Config is the packaged configuration file.
	Config string
	// KeyFile is the packaged key file.
	KeyFile string
}

// keyProblem returns the message to give, instead of advising a new key, when the type needs BACKUP_SECRET_KEY, the environment lacks a
// usable one, and backupweb runs from the Debian package: the packaged key
// file exists (systemd loads it for the unit, but not for a shell), or the
// configuration is the packaged one. ok is false otherwise, and the
// message of the type's check (make a key with gen-secret) stands.
//
// A key that is set but too short is the key file's fault as much as the
// environment's: the message names the file to fix.
func (pk Packaged) keyProblem(source string, lookupEnv func(string) (string, bool)) (msg string, ok bool) {
	v, set := lookupEnv(SecretEnv)
	if set && len(v) >= MinSecretLen {
		return "", false
	}
	exists := pk.KeyFileExists()
	if !exists && !samePath(source, pk.Config) {
		return "", false
	}
	switch {
	case !exists:
		return fmt.Sprintf("this type keeps sessions and needs the environment variable %s, which the package keeps in %s (the unit's EnvironmentFile=), but that file is missing; `dpkg-reconfigure backupweb` makes a new key there (a new key signs everyone out)",
			SecretEnv, pk.KeyFile), true
	case set && v != "":
		return fmt.Sprintf("environment variable %s is shorter than %d characters; the package keeps the key in %s (the unit's EnvironmentFile=): check that file, and that nothing else sets the variable",
			SecretEnv, MinSecretLen, pk.KeyFile), true
	default:
		return fmt.Sprintf("this type keeps sessions and needs the environment variable %s, which the package keeps in %s: systemd loads it for the service (EnvironmentFile=), a shell does not; load it first (set -a; . %s; set +a) and keep that key (a new key signs everyone out)",
			SecretEnv, pk.KeyFile, pk.KeyFile), true
	}
}

// KeyFileExists reports whether the packaged key file is there. A file
// this user may not even look at (its folder is root:backupweb 0750)
// counts as there: the package is installed.
func (pk Packaged) KeyFileExists() bool {
	if pk.KeyFile == "" {
		return false
	}
	_, err := os.Stat(pk.KeyFile)
	return err == nil || errors.Is(err, fs.ErrPermission)
}

// samePath reports whether two paths name the same file by name.
func samePath(a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	aa, err1 := filepath.Abs(a)
	bb, err2 := filepath.Abs(b)
	return err1 == nil && err2 == nil && aa == bb
}

// standInKey answers lookups as lookupEnv does, except BACKUP_SECRET_KEY,
// which it answers with a key of the shortest accepted length. It lets the
// type's loaders check every other key once the missing key has been
// reported; nothing is ever built or signed with it (Open only validates
// when it is in use).
func standInKey(lookupEnv func(string) (string, bool)) func(string) (string, bool) {
	return func(k string) (string, bool) {
		if k == SecretEnv {
			return strings.Repeat("0", MinSecretLen), true
		}
		return lookupEnv(k)
	}
}
