package ini

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ReadFile parses the file at path like Parse (known as there), recording
// why it cannot be read: a missing file, a link to nothing, a folder, a file
// the program may not read are all errors naming the path. It never returns
// nil: a file that cannot be read gives an empty File.
func ReadFile(path string, rep *Report, known ...string) *File {
	fh, err := os.Open(path)
	if err == nil {
		defer fh.Close()
		var info fs.FileInfo
		if info, err = fh.Stat(); err == nil && info.IsDir() {
			err = errors.New("it is a directory")
		}
	} else if errors.Is(err, fs.ErrNotExist) {
		if target, lerr := os.Readlink(path); lerr == nil {
			err = fmt.Errorf("it is a symbolic link to %s, which does not exist", target)
		}
	}
	if err != nil {
		rep.Errorf(path, 0, "", "", "cannot read the configuration file %s: %v", ShowPath(path), PathCause(err))
		return Parse(path, strings.NewReader(""), rep, known...)
	}
	return Parse(path, fh, rep, known...)
}

// ShowPath returns path as a message should show it: a relative path
// becomes the absolute path that was tried, followed by "(relative to the
// working directory)", so that an operator who started the program from
// another folder sees at once where it looked.
func ShowPath(path string) string {
	if path == "" || filepath.IsAbs(path) {
		return path
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return path
	}
	return fmt.Sprintf("%s (%s relative to the working directory)", abs, path)
}

// PathCause drops the operation and path from an *fs.PathError, for a
// message that already names the file; other errors are returned as they
// are.
func PathCause(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
