package backupweb

import (
	"errors"
	"io/fs"
	"os"
	"strconv"
	"strings"

	"github.com/backupweb/backupweb/internal/ini"
)

// The errors a program may branch on. NewProvider and ReadConfig wrap
// them, so test with errors.Is.
var (
	// ErrNoType: no authentication type was named, neither by NewProvider's
	// typ nor by a type key, or ReadConfig's file has no [authentication]
	// section. No authentication is a choice to write down ("none"),
	// never a default of the library.
	ErrNoType = errors.New("backupweb: no authentication type")
	// ErrUnknownType: the type named is none of none, basic, flask-login
	// and oauth (nor an alias of one).
	ErrUnknownType = errors.New("backupweb: unknown authentication type")
	// ErrNoSecretKey: flask-login and oauth keep sessions and need
	// Options.SecretKey, of at least 32 characters.
	ErrNoSecretKey = errors.New("backupweb: Options.SecretKey is missing or too short")
	// ErrNoStateDir: flask-login and oauth keep sessions in
	// Options.StateDir, which is missing or cannot be used.
	ErrNoStateDir = errors.New("backupweb: Options.StateDir is missing or cannot be used")
)

// ConfigError is one problem of a configuration: where it is (the file
// and line when it came from ReadConfig, the section and key) and what is
// wrong, in the words `backupweb check-config` uses. NewProvider and
// ReadConfig return one, or several joined (errors.As finds the first;
// Unwrap() []error of the returned error gives them all). It never holds
// a secret's value.
type ConfigError struct {
	// File is the configuration file's path; "" for keys given as a map.
	File string
	// Line is the 1-based line in File; 0 when the problem is not about
	// one line.
	Line int
	// Section is the section's name ("authentication"); "" when the
	// problem is not about one.
	Section string
	// Key is the key, lower case; "" when the problem is not about one.
	Key string
	// Msg says what is wrong and how to fix it.
	Msg string
	// Err is the cause when there is one to test: a missing file wraps
	// fs.ErrNotExist, a missing type ErrNoType, and so on.
	Err error
}

func (e *ConfigError) Error() string {
	var b strings.Builder
	b.WriteString("backupweb: ")
	switch {
	case e.File != "" && e.Line > 0:
		b.WriteString(e.File + ":" + strconv.Itoa(e.Line) + ": ")
	case e.File != "":
		b.WriteString(e.File + ": ")
	}
	if e.Section != "" {
		b.WriteString("[" + e.Section + "] ")
	}
	if e.Key != "" {
		b.WriteString(e.Key + ": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Unwrap returns the cause, if any.
func (e *ConfigError) Unwrap() error { return e.Err }

// configErrors is several problems of one configuration: its text is
// every problem, one a line, and it unwraps to each *ConfigError.
type configErrors []error

func (es configErrors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = strings.TrimPrefix(e.Error(), "backupweb: ")
	}
	return "backupweb: invalid configuration:\n" + strings.Join(lines, "\n")
}

// Unwrap returns every problem.
func (es configErrors) Unwrap() []error { return es }

// problemError is the *ConfigError of an error problem.
func problemError(p ini.Problem) *ConfigError {
	e := &ConfigError{File: p.File, Line: p.Line, Section: p.Section, Key: p.Key, Msg: p.Msg}
	if p.File != "" && p.Line == 0 && p.Key == "" {
		// A problem with the file itself: say whether it exists.
		if _, err := os.Stat(p.File); errors.Is(err, fs.ErrNotExist) {
			e.Err = err
		}
	}
	return e
}

// causeError is an error with its own text that also matches cause (one
// of the sentinels) with errors.Is.
type causeError struct {
	msg   string
	cause error
}

func (e *causeError) Error() string { return e.msg }
func (e *causeError) Unwrap() error { return e.cause }
