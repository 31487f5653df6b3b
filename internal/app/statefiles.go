package app

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/backupweb/backupweb/internal/atomicfile"
	"github.com/backupweb/backupweb/internal/config"
	"github.com/backupweb/backupweb/internal/factors"
	"github.com/backupweb/backupweb/internal/fspath"
	"github.com/backupweb/backupweb/internal/tokens"
)

// The names, in [server] state_dir, of the files type flask-login writes
// about its users when factors_file and tokens_file are not set: what the
// service writes lies in the one folder it may write (the package's
// /var/lib/backupweb), never beside the operator's files.
const (
	FactorsName = "factors"
	TokensName  = "tokens"
)

// StateFile is one file that type flask-login rewrites: the key that
// names it, its path, and Old, the place an earlier version kept it by
// default (the user file's path + .factors or .tokens), "" when the key
// sets the path.
type StateFile struct {
	Key  string
	Path string
	Old  string
}

// StateFiles are the files a flask-login configuration keeps about its
// users, defaults applied.
type StateFiles struct {
	// UsersFile is users_file.
	UsersFile string
	// Factors is factors_file (second factors), Tokens tokens_file
	// (machine tokens).
	Factors, Tokens StateFile
}

// stateFiles returns the files of a configuration whose user file is
// usersFile, whose factors_file and tokens_file keys are factorsKey and
// tokensKey ("" when unset) and whose state folder is stateDir. Without a
// state folder (a configuration made in code with none), the defaults stay
// beside the user file, as login.Config.WithDefaults has them.
func stateFiles(usersFile, factorsKey, tokensKey, stateDir string) StateFiles {
	one := func(key, value, name, old string) StateFile {
		switch {
		case value != "":
			return StateFile{Key: key, Path: value}
		case stateDir == "" || usersFile == "":
			return StateFile{Key: key, Path: old}
		}
		return StateFile{Key: key, Path: filepath.Join(stateDir, name), Old: old}
	}
	sf := StateFiles{UsersFile: usersFile}
	if usersFile == "" {
		return sf
	}
	sf.Factors = one("factors_file", factorsKey, FactorsName, factors.DefaultPath(usersFile))
	sf.Tokens = one("tokens_file", tokensKey, TokensName, tokens.DefaultPath(usersFile))
	return sf
}

// Pending reports whether the file is still at its old place: the new
// one does not exist and the old one does. Then the old one is the file
// in force, until MoveOld moves it.
func (f StateFile) Pending() bool {
	if f.Old == "" {
		return false
	}
	if _, err := os.Lstat(f.Path); !errors.Is(err, fs.ErrNotExist) {
		return false
	}
	_, err := os.Lstat(f.Old)
	return !errors.Is(err, fs.ErrNotExist)
}

// MoveOld moves the file from its old default place into the state
// folder, once: when the new file does not exist and the old one does, the
// old file's content is written to the new path (mode 0600, atomically,
// under the new file's edit lock, so that no editor sees it half made)
// and the old file is removed. moved tells whether it did. A copy made but
// an old file that cannot be removed (a read-only /etc) is no error: the
// old file is no longer read, and left says why it stays. err means
// nothing was moved; the file in force could not be read or copied, and
// the service must not start without it.
func (f StateFile) MoveOld() (moved bool, left, err error) {
	if !f.Pending() {
		return false, nil, nil
	}
	fail := func(err error) (bool, error, error) {
		return false, nil, fmt.Errorf("%s: cannot move %s, the old default place, to %s in state_dir: %w; move it by hand (mv %s %s) and give it to the user backupweb runs as (mode 0600)",
			f.Key, fspath.Show(f.Old), fspath.Show(f.Path), err, f.Old, f.Path)
	}
	dir := filepath.Dir(f.Path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fail(err)
	}
	unlock, err := atomicfile.Lock(f.Path, 0o600)
	if err != nil {
		return fail(err)
	}
	defer unlock()
	if _, err := os.Lstat(f.Path); !errors.Is(err, fs.ErrNotExist) {
		return false, nil, nil // another process moved it meanwhile
	}
	data, err := os.ReadFile(f.Old)
	if err != nil {
		return fail(err)
	}
	if err := atomicfile.Write(f.Path, data, 0o600); err != nil {
		return fail(err)
	}
	if err := os.Remove(f.Old); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return true, err, nil
	}
	os.Remove(f.Old + ".lock") // its editors' lock, empty; harmless when it stays
	return true, nil, nil
}

// LogMove writes the one line that says a file was moved: info when the
// old file is gone, a warning when it is left (it is no longer read).
func (f StateFile) LogMove(log *slog.Logger, left error) {
	if left == nil {
		log.Info("state: moved "+f.Key+" from its old default place into state_dir", "from", f.Old, "to", f.Path)
		return
	}
	log.Warn("state: copied "+f.Key+" from its old default place into state_dir; the old file could not be removed and is no longer read: remove it", "from", f.Old, "to", f.Path, "err", left)
}

// StateFilesOf returns the files the flask-login configuration cfg keeps
// about its users, defaults applied, as the service finds them.
func StateFilesOf(cfg *config.Config) StateFiles {
	return stateFiles(cfg.Auth.String("users_file", ""), cfg.Auth.String("factors_file", ""), cfg.Auth.String("tokens_file", ""), cfg.Server.StateDir)
}

// InForce is the file's path in force now: Old while the file is still
// there (Pending), else Path.
func (f StateFile) InForce() string {
	if f.Pending() {
		return f.Old
	}
	return f.Path
}
