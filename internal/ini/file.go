package ini

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/backupweb/backupweb/internal/fspath"
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
		rep.Errorf(path, 0, "", "", "cannot read the configuration file %s: %v", fspath.Show(path), fspath.Cause(err))
		return Parse(path, strings.NewReader(""), rep, known...)
	}
	return Parse(path, fh, rep, known...)
}
