package userfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/backupweb/backupweb/internal/atomicfile"
)

// newFileMode is the mode of a user file Save creates: readable and
// writable by its owner only, as a file of password hashes should be.
const newFileMode fs.FileMode = 0o600

// NewFile says how SaveWith makes a user file that does not exist yet:
// always mode 0600, owned by the creating process unless SetOwner names
// another owner (which needs root). Its zero value is what Save does. It
// has no effect on a file that exists, which keeps its owner, group and
// mode.
type NewFile struct {
	// UID and GID are the owner and group the new file is given when
	// SetOwner is true: typically the service account that reads the
	// file, when root makes it.
	UID, GID int
	SetOwner bool
}

// renameFile is os.Rename; tests replace it to exercise a failed save.
var renameFile = os.Rename

// Save writes the Doc to path atomically: the text goes to a temporary file
// in the same directory (created with mode 0600), which is flushed to disk,
// given the old file's mode and owner, renamed over path, and the directory
// is flushed so the rename survives a crash. Readers see the old file or the
// new one, never a mix; on failure the old file is untouched and the
// temporary file removed.
//
// A new file gets mode 0600 (SaveWith makes it otherwise). An existing
// file keeps its permission bits, which Save neither widens nor narrows (an
// operator may have granted the server's group read access), and its owner
// and group, so that an administrator editing a service account's file as
// root does not lock the service out; if the owner cannot be kept, Save
// fails rather than change it. When path is a symbolic link, the file it points to is replaced and
// the link kept.
func (d *Doc) Save(path string) error { return d.SaveWith(path, NewFile{}) }

// SaveWith is Save, making a file that does not exist yet as nf says. A
// file that exists keeps its owner, group and mode whatever nf says.
func (d *Doc) SaveWith(path string, nf NewFile) error {
	mode := newFileMode
	target, err := resolveLink(path)
	if err != nil {
		return err
	}
	old, err := os.Stat(target)
	switch {
	case err == nil && !old.Mode().IsRegular():
		return fmt.Errorf("%s is not a regular file", target)
	case err == nil:
		mode = old.Mode().Perm()
	case errors.Is(err, fs.ErrNotExist):
		old = nil
	default:
		return err // an *fs.PathError, which names the file
	}

	dir := filepath.Dir(target)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(target)+".tmp-*")
	if err != nil {
		return fmt.Errorf("creating a temporary file beside %s: %w", target, err)
	}
	renamed := false
	defer func() {
		if !renamed {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err := d.WriteTo(tmp); err != nil {
		return fmt.Errorf("writing %s: %w", tmp.Name(), err)
	}
	if old != nil {
		if err := keepOwner(tmp, old); err != nil {
			return fmt.Errorf("cannot keep the owner of %s, file left unchanged: %w", target, err)
		}
	} else if nf.SetOwner {
		if err := tmp.Chown(nf.UID, nf.GID); err != nil {
			return fmt.Errorf("cannot give the new file %s the owner %d:%d, file not created: %w", target, nf.UID, nf.GID, err)
		}
	}
	// After chown, which may clear set-id bits: the mode is the last word.
	if err := tmp.Chmod(mode); err != nil {
		return fmt.Errorf("setting the mode of %s: %w", tmp.Name(), err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("flushing %s: %w", tmp.Name(), err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("closing %s: %w", tmp.Name(), err)
	}
	if err := renameFile(tmp.Name(), target); err != nil {
		return fmt.Errorf("replacing %s: %w", target, err)
	}
	renamed = true
	return atomicfile.SyncDir(dir)
}

// resolveLink returns the file path refers to: path itself unless it is a
// symbolic link, which must then lead to something.
func resolveLink(path string) (string, error) {
	fi, err := os.Lstat(path)
	if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		return path, nil // a missing file is created; other errors surface later
	}
	target, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", fmt.Errorf("following the link %s: %w", path, err)
	}
	return target, nil
}
