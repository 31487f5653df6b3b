package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/backupweb/backupweb/auth/factory"
)

// Paths of the Debian package (packaging/): the configuration it installs,
// the environment file holding BACKUP_SECRET_KEY that it makes once and
// that the unit loads with EnvironmentFile=, and the user the unit runs as.
// Variables so that tests can point them at a temporary folder.
var (
	packagedConfig  = "/etc/backupweb/backupweb.ini"
	packagedKeyFile = "/etc/backupweb/env"
)

// serviceUser is the account the packaged unit runs as (User=backupweb):
// what check-config -as-service checks access for, and whose group a user
// file made in a folder of that group is given.
const serviceUser = "backupweb"

// packagedKeyProblem returns the message to give, instead of advising a
// new key, when the type needs BACKUP_SECRET_KEY, the environment lacks a
// usable one, and backupweb runs from the Debian package: the packaged key
// file exists (systemd loads it for the unit, but not for a shell), or the
// configuration is the packaged one. ok is false otherwise, and the
// factory's own message (make a key with gen-secret) stands.
//
// A key that is set but too short is the key file's fault as much as the
// environment's: the message names the file to fix.
func packagedKeyProblem(source string, lookupEnv func(string) (string, bool)) (msg string, ok bool) {
	v, set := lookupEnv(factory.SecretEnv)
	if set && len(v) >= factory.MinSecretLen {
		return "", false
	}
	exists := packagedKeyFileExists()
	if !exists && !samePath(source, packagedConfig) {
		return "", false
	}
	switch {
	case !exists:
		return fmt.Sprintf("this type keeps sessions and needs the environment variable %s, which the package keeps in %s (the unit's EnvironmentFile=), but that file is missing; `dpkg-reconfigure backupweb` makes a new key there (a new key signs everyone out)",
			factory.SecretEnv, packagedKeyFile), true
	case set && v != "":
		return fmt.Sprintf("environment variable %s is shorter than %d characters; the package keeps the key in %s (the unit's EnvironmentFile=): check that file, and that nothing else sets the variable",
			factory.SecretEnv, factory.MinSecretLen, packagedKeyFile), true
	default:
		return fmt.Sprintf("this type keeps sessions and needs the environment variable %s, which the package keeps in %s: systemd loads it for the service (EnvironmentFile=), a shell does not; load it first (set -a; . %s; set +a) and keep that key (a new key signs everyone out)",
			factory.SecretEnv, packagedKeyFile, packagedKeyFile), true
	}
}

// packagedKeyFileExists reports whether the packaged key file is there. A
// file this user may not even look at (its folder is root:backupweb 0750)
// counts as there: the package is installed.
func packagedKeyFileExists() bool {
	_, err := os.Stat(packagedKeyFile)
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
// reported; nothing is ever built or signed with it (load only validates
// when it is in use).
func standInKey(lookupEnv func(string) (string, bool)) func(string) (string, bool) {
	return func(k string) (string, bool) {
		if k == factory.SecretEnv {
			return strings.Repeat("0", factory.MinSecretLen), true
		}
		return lookupEnv(k)
	}
}
