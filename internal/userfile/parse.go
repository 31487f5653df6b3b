// Package userfile reads and edits the user file of the flask-login
// authentication type: one "<username>:<password_hash>" per line.
//
// The format is the one Flask-era deployments and Apache's `htpasswd -B`
// write: blank lines and lines starting with '#' are ignored, surrounding
// whitespace is dropped, a line is split at its first ':', values are bcrypt
// hashes ($2a$, $2b$ or $2y$) or, when bcrypt is off, plain passwords.
// CRLF line ends and a leading UTF-8 byte order mark are tolerated.
//
// Parse and ParseFile read a file for the login provider and report every
// problem at once. Doc edits a file for the `user` command, keeping every
// line it does not touch byte for byte, and saves it atomically.
//
// No error of this package contains any part of a line's content: lines
// hold password hashes, or plain passwords, and errors end up in logs.
// This package does not verify passwords; see package password.
package userfile

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// MaxSize is the largest user file read, in bytes. It keeps a path pointed
// by mistake at a device or a huge file from exhausting memory; it is far
// more than any real user file needs (about 250,000 users).
const MaxSize = 16 << 20

// maxProblems caps the problems Parse reports; the rest are counted.
const maxProblems = 50

// Kinds of problem Parse reports, each wrapped in a *LineError and usable
// with errors.Is on the joined error Parse returns.
var (
	ErrMalformed = errors.New("malformed line: no ':' between user name and password")
	ErrDuplicate = errors.New("duplicate user name")
	ErrNoUsers   = errors.New("no users defined")
	ErrTooLarge  = fmt.Errorf("file larger than %d MiB", MaxSize>>20)

	errEmptyValue = errors.New("empty password value")
)

// Entry is one user read from a user file.
type Entry struct {
	Name string // valid per ValidName
	Hash string // bcrypt hash, or plain password when bcrypt is off; never empty
	Line int    // 1-based line number, for messages
}

// LineError is one problem in a user file: which file, which line (0 for the
// file as a whole) and what is wrong. Its message never holds the line's text.
// It is a configuration problem in the program's one shape (ini.Placed):
// recorded at its file and line as it is.
type LineError struct {
	File string
	Line int
	Err  error
}

// Error formats the problem as "FILE:LINE: what is wrong".
func (e *LineError) Error() string {
	if e.Line == 0 {
		return fmt.Sprintf("%s: %s", e.File, e.Detail())
	}
	return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Detail())
}

// Place returns the file and line.
func (e *LineError) Place() (file string, line int, key string) { return e.File, e.Line, "" }

// Detail says what is wrong, without the place.
func (e *LineError) Detail() string {
	if e.Err == nil {
		return "unknown problem"
	}
	return e.Err.Error()
}

// Unwrap returns the kind of problem.
func (e *LineError) Unwrap() error { return e.Err }

// Parse reads a user file from r. name identifies the file in errors
// (usually its path). When bcrypt is true every value must be a supported
// bcrypt hash; otherwise values are taken as plain passwords.
//
// Parse checks the whole file and returns every problem it finds (up to 50,
// then a count), joined with errors.Join, each a *LineError naming the file
// and line: a line without ':', an invalid user name (see ValidName), an
// empty value, a user defined twice, a value that is not a supported hash,
// or no users at all. On any problem it returns no entries: a user file that
// is partly wrong is not half used.
func Parse(name string, r io.Reader, bcrypt bool) ([]Entry, error) {
	entries, err := ParseAll(name, r, bcrypt)
	if err != nil {
		return nil, err
	}
	return entries, nil
}

// ParseAll is Parse for a file being reloaded: alongside the same joined
// problems, it returns the entries of the lines that are good, so that a
// caller can keep serving the users an edit did not break. A user name
// that appears on a line with a problem (defined twice, say) is left out
// entirely: which of its lines was meant is not known. A file with no
// users returns ErrNoUsers (wrapped in a *LineError) and no entries.
func ParseAll(name string, r io.Reader, bcrypt bool) ([]Entry, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxSize+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	if len(data) > MaxSize {
		return nil, &LineError{File: name, Err: ErrTooLarge}
	}
	lines, _ := splitLines(string(data))
	var (
		entries  []Entry
		problems []error
		hidden   int
		first    = make(map[string]int)  // user name → line of its first definition
		bad      = make(map[string]bool) // user names on a line with a problem
	)
	report := func(line int, err error) {
		if len(problems) < maxProblems {
			problems = append(problems, &LineError{File: name, Line: line, Err: err})
		} else {
			hidden++
		}
	}
	for i, raw := range lines {
		n := i + 1
		kind, user, value := splitLine(raw)
		switch kind {
		case lineBlank, lineComment:
			continue
		case lineMalformed:
			report(n, ErrMalformed)
			continue
		}
		if err := ValidName(user); err != nil {
			report(n, err)
			continue
		}
		if prev, dup := first[user]; dup {
			report(n, fmt.Errorf("%w (first defined on line %d)", ErrDuplicate, prev))
			bad[user] = true
			continue
		}
		first[user] = n
		if err := checkValue(value, bcrypt); err != nil {
			report(n, err)
			bad[user] = true
			continue
		}
		entries = append(entries, Entry{Name: user, Hash: value, Line: n})
	}
	if hidden > 0 {
		problems = append(problems, &LineError{File: name, Err: fmt.Errorf("%d more problems not shown", hidden)})
	}
	if len(problems) > 0 {
		good := entries[:0:0]
		for _, e := range entries {
			if !bad[e.Name] {
				good = append(good, e)
			}
		}
		return good, errors.Join(problems...)
	}
	if len(entries) == 0 {
		return nil, &LineError{File: name, Err: ErrNoUsers}
	}
	return entries, nil
}

// ParseFile opens path and parses it with Parse, naming it by its path.
// A missing or unreadable file is an error that names the path.
func ParseFile(path string, bcrypt bool) ([]Entry, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err // an *fs.PathError, which names the file
	}
	defer f.Close()
	return Parse(path, f, bcrypt)
}
