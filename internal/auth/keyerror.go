package auth

import "strconv"

// KeyError is a problem with the value of one configuration key, as the
// Validate method of a type's configuration returns it: a Go caller reads
// it as an error, and the program's loader records it at the key's line
// (it is an ini.Placed, by its methods Place and Detail).
// Err never holds a secret value.
type KeyError struct {
	// Key is the configuration key, lower-cased (such as "password").
	Key string
	// Err says what is wrong with its value.
	Err error
}

// Error returns "KEY: what is wrong".
func (e *KeyError) Error() string { return e.Key + ": " + e.Err.Error() }

// Unwrap returns Err.
func (e *KeyError) Unwrap() error { return e.Err }

// FileError is a problem at a line of a file a configuration names, such
// as the user file: the program's loader records it at that file and
// line (it is an ini.Placed). Err never holds a secret value.
type FileError struct {
	// File is the file's path as the configuration names it.
	File string
	// Line is the 1-based line, 0 when the problem is about the whole file.
	Line int
	// Err says what is wrong.
	Err error
}

// Error returns "FILE:LINE: what is wrong" ("FILE: ..." for line 0).
func (e *FileError) Error() string {
	if e.Line > 0 {
		return e.File + ":" + strconv.Itoa(e.Line) + ": " + e.Err.Error()
	}
	return e.File + ": " + e.Err.Error()
}

// Unwrap returns Err.
func (e *FileError) Unwrap() error { return e.Err }

// Warning marks a problem the configuration can still be used with, among
// the problems a type reports in order: the program's loader records Err
// (a *KeyError or *FileError, for its place) as a warning (Warning is an
// ini.Warner).
type Warning struct {
	Err error
}

// Error returns Err's message.
func (w *Warning) Error() string { return w.Err.Error() }

// Unwrap returns Err.
func (w *Warning) Unwrap() error { return w.Err }

// Place returns the key: a KeyError is at a key of the section being read.
func (e *KeyError) Place() (file string, line int, key string) { return "", 0, e.Key }

// Detail returns what is wrong with the value.
func (e *KeyError) Detail() string { return e.Err.Error() }

// Place returns the file and line.
func (e *FileError) Place() (file string, line int, key string) { return e.File, e.Line, "" }

// Detail returns what is wrong at the line.
func (e *FileError) Detail() string { return e.Err.Error() }

// IsWarning returns true: the configuration can be used with it.
func (w *Warning) IsWarning() bool { return true }
