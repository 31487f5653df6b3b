package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/backupweb/backupweb/internal/fspath"
)

// CheckStateDir reports whether the program could keep its state in dir:
// an existing folder it may write into, or a path whose nearest existing
// parent is such a folder (the folder is then made at start). It creates
// nothing, so check-config can call it; the error says what to do.
func CheckStateDir(dir string) error {
	if dir == "" {
		return errors.New("must not be empty")
	}
	path := dir
	for {
		info, err := os.Stat(path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			parent := filepath.Dir(path)
			if parent == path {
				return fmt.Errorf("the state folder %s cannot be created: no part of its path exists", fspath.Show(dir))
			}
			path = parent
			continue
		case err != nil:
			return fmt.Errorf("the state folder %s cannot be used: %v", fspath.Show(dir), fspath.Cause(err))
		case !info.IsDir():
			return fmt.Errorf("the state folder %s cannot be used: %s is not a folder; set state_dir to a folder backupweb may write", fspath.Show(dir), path)
		}
		if err := unix.Access(path, unix.W_OK|unix.X_OK); err != nil {
			verb := "written"
			if path != dir {
				verb = "created"
			}
			return fmt.Errorf("the state folder %s cannot be %s by this user (no write permission on %s); create it for the user backupweb runs as (mode 0700), or set state_dir to a folder it may write", fspath.Show(dir), verb, path)
		}
		return nil
	}
}
