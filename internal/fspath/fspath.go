// Package fspath says in messages which file or folder failed: a relative
// path with the absolute path that was tried, an error of the os package
// without the path the message already names.
package fspath

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
)

// Show returns path as a message should show it: a relative path
// becomes the absolute path that was tried, followed by "(relative to the
// working directory)", so that an operator who started the program from
// another folder sees at once where it looked.
func Show(path string) string {
	if path == "" || filepath.IsAbs(path) {
		return path
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return path
	}
	return fmt.Sprintf("%s (%s relative to the working directory)", abs, path)
}

// Cause drops the operation and path from an *fs.PathError, for a
// message that already names the file; other errors are returned as they
// are.
func Cause(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
