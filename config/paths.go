package config

import (
	"fmt"
	"path/filepath"
)

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
