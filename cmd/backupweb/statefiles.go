package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"syscall"

	"github.com/backupweb/backupweb/internal/app"
	"github.com/backupweb/backupweb/internal/config"
)

// stateConfigs returns the configurations to look in for the service that
// uses a user file, in order: the one given with -config, else
// ./backupweb.ini and the packaged one, those that exist.
func stateConfigs(configPath string) []string {
	if configPath != "" {
		return []string{configPath}
	}
	var out []string
	for _, p := range []string{config.DefaultPath, packagedConfig} {
		if _, err := os.Stat(p); err == nil {
			out = append(out, p)
		}
	}
	return out
}

// userState finds where the service keeps the second factors and machine
// tokens of the users of usersFile, so that a command edits the files the
// service reads: those of the flask-login configuration (configPath, else
// ./backupweb.ini, else the packaged one) whose users_file is usersFile,
// in its state_dir unless factors_file or tokens_file says otherwise. A
// -config whose users_file is another file is an error. When no
// configuration names the file, the files beside it (the user file's path
// + .factors and .tokens, where earlier versions kept them) are used and
// a note on standard error says so.
func (c *cli) userState(usersFile, configPath string) (app.StateFiles, error) {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	var looked []string
	for _, p := range stateConfigs(configPath) {
		sf, ok := app.Check(p, c.options("", quiet)).StateFiles()
		if ok && sameFile(sf.UsersFile, usersFile) {
			return sf, nil
		}
		if configPath != "" {
			if !ok {
				return app.StateFiles{}, fmt.Errorf("-config %s is not a flask-login configuration with a users_file", configPath)
			}
			return app.StateFiles{}, fmt.Errorf("-config %s names the user file %s, not %s", configPath, sf.UsersFile, usersFile)
		}
		looked = append(looked, p)
	}
	sf := app.StateFiles{UsersFile: usersFile,
		Factors: app.StateFile{Key: "factors_file", Path: usersFile + ".factors"},
		Tokens:  app.StateFile{Key: "tokens_file", Path: usersFile + ".tokens"}}
	where := "found no configuration (./" + config.DefaultPath + ", " + packagedConfig + ")"
	if len(looked) > 0 {
		where = fmt.Sprintf("found no configuration that names it (looked in %v)", looked)
	}
	fmt.Fprintf(c.stderr, "note: %s: %s, so its tokens and factors are kept beside it; a service that uses it keeps them in its state_dir unless tokens_file and factors_file say otherwise: give -tokens or -factors\n", usersFile, where)
	return sf, nil
}

// sameFile reports whether two paths name the same file: the same file
// on disk, or, when either is missing, the same absolute path.
func sameFile(a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	if errA == nil && errB == nil {
		return os.SameFile(fa, fb)
	}
	aa, err1 := filepath.Abs(a)
	bb, err2 := filepath.Abs(b)
	return err1 == nil && err2 == nil && aa == bb
}

// prepareState moves f from its old default place into the state folder
// when it is still there (as serve would at its next start), saying so on
// standard error. A move that fails stops the command: editing the old
// file would edit one the service no longer reads.
func (c *cli) prepareState(f app.StateFile) error {
	moved, left, err := f.MoveOld()
	if err != nil {
		return err
	}
	if moved {
		fmt.Fprintf(c.stderr, "moved %s to %s (the service keeps it in its state_dir)\n", f.Old, f.Path)
		c.giveToFolderOwner(f.Path)
	}
	if left != nil {
		fmt.Fprintf(c.stderr, "warning: the old %s stays (%v); it is no longer read: remove it\n", f.Old, left)
	}
	return nil
}

// giveToFolderOwner, run as root, gives the file at path (and its edit
// lock) to the owner and group of its folder when the folder belongs to
// another account: a state file written by a command run as root in the
// service's state folder (backupweb:backupweb 0700) must stay readable by
// the service. Otherwise, and for a missing file, it does nothing. A
// failure is a warning on standard error: the service cannot read the
// file until it is given to it.
func (c *cli) giveToFolderOwner(path string) {
	if os.Geteuid() != 0 {
		return
	}
	fi, err := os.Stat(filepath.Dir(path))
	if err != nil {
		return
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || st.Uid == 0 {
		return
	}
	for _, p := range []string{path, path + ".lock"} {
		if err := os.Lchown(p, int(st.Uid), int(st.Gid)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			fmt.Fprintf(c.stderr, "warning: %v; the service cannot read %s until it belongs to the owner of its folder (chown %d:%d %s)\n", err, path, st.Uid, st.Gid, path)
			return
		}
	}
}
