// Package atomicfile replaces small files that a running service reads
// while commands edit them (the factors and tokens files, the table of
// spent single-use tokens), so that a reader sees the old content or the
// new, never a mix, and a crash leaves one of them whole. It also holds
// the lock that serialises such edits between processes.
//
// It does not keep a file's owner or follow links: the user file, whose
// owner and mode are the administrator's, has its own save (package
// userfile).
package atomicfile

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
)

// rename is os.Rename; tests replace it to exercise a failed write.
var rename = os.Rename

// Write replaces the file at path with data and mode perm: the bytes go
// to a temporary file beside it (".NAME.tmp-*"), which is synced and
// renamed over path, and the folder is synced so that the rename survives
// a crash. On any error the file at path is left as it was and the
// temporary file is removed. Errors name the file.
func Write(path string, data []byte, perm fs.FileMode) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("creating a temporary file beside %s: %w", path, err)
	}
	done := false
	defer func() {
		if !done {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err := tmp.Chmod(perm); err != nil {
		return fmt.Errorf("setting the mode of %s: %w", tmp.Name(), err)
	}
	if _, err := tmp.Write(data); err != nil {
		return fmt.Errorf("writing %s: %w", tmp.Name(), err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("flushing %s: %w", tmp.Name(), err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("closing %s: %w", tmp.Name(), err)
	}
	if err := rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("replacing %s: %w", path, err)
	}
	done = true
	return SyncDir(dir)
}

// SyncDir makes a rename in dir durable; errors name the folder. Windows
// cannot open a folder for syncing and makes renames durable itself.
func SyncDir(dir string) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("opening directory %s to flush it: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("flushing directory %s: %w", dir, err)
	}
	return nil
}

// Lock takes the exclusive lock of the file at path, held on path+".lock"
// (made with mode perm when missing), waiting while another process or
// goroutine holds it, and returns its release. The lock is advisory: it
// serialises the editors that take it, never a reader.
func Lock(path string, perm fs.FileMode) (unlock func(), err error) {
	f, err := os.OpenFile(path+".lock", os.O_RDWR|os.O_CREATE, perm)
	if err != nil {
		return nil, fmt.Errorf("opening the lock file: %w", err)
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("locking %s: %w", f.Name(), err)
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}

// Edit changes the file at path under its lock (Lock): edit reads the file
// as it is and returns its new content, which replaces the file (Write,
// with mode perm). When edit returns an error, that error is returned as
// it is and the file is left unchanged.
func Edit(path string, perm fs.FileMode, edit func() ([]byte, error)) error {
	unlock, err := Lock(path, perm)
	if err != nil {
		return err
	}
	defer unlock()
	data, err := edit()
	if err != nil {
		return err
	}
	return Write(path, data, perm)
}
