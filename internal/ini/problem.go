// Package ini reads INI files such as backupweb's configuration file.
//
// The format is the one Python's configparser reads with
// ConfigParser(interpolation=None, strict=True), because existing
// configuration files of the Flask-era service must keep working unchanged:
// "[section]" headers, "key = value" or "key: value" lines, full-line
// comments starting with "#" or ";", case-insensitive keys, indented
// continuation lines, and no inline comments, quote stripping or "%"
// interpolation. On top of that, "${NAME}" in a value is replaced by the
// environment variable NAME (see File.Expand).
//
// Nothing in this package stops at the first mistake: every finding is
// recorded as a Problem in a Report, located by file, line, section and key,
// so that "backupweb check-config" can print all of them at once. Problem
// messages never repeat a value or a line of the file, since either may hold
// a secret.
package ini

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
)

// Severity tells whether a Problem stops the program (Error) or is only
// worth telling the operator about (Warning).
type Severity int

const (
	// Error is a problem that makes the configuration unusable.
	Error Severity = iota
	// Warning is a problem the program can run with, such as an unknown key.
	Warning
)

// String returns "error" or "warning", the word check-config starts its
// lines with.
func (s Severity) String() string {
	if s == Warning {
		return "warning"
	}
	return "error"
}

// Problem is one finding about the configuration: where it is (file, line,
// section, key) and what is wrong. Msg never includes the value of a key or
// the text of a line, because either may be a secret.
type Problem struct {
	Severity Severity
	File     string // file name as given to Parse or Load; "" when not about a file
	Line     int    // 1-based line number; 0 when the problem is not about one line
	Section  string // section name; "" when not about a section
	Key      string // lower-cased key; "" when not about a key
	Msg      string
}

// String renders the problem as "error: FILE:LINE: [section] key: msg" or
// "warning: ...", leaving out the parts that are empty or zero.
func (p Problem) String() string {
	var b strings.Builder
	b.WriteString(p.Severity.String())
	b.WriteString(": ")
	switch {
	case p.File != "" && p.Line > 0:
		b.WriteString(p.File + ":" + strconv.Itoa(p.Line) + ": ")
	case p.File != "":
		b.WriteString(p.File + ": ")
	case p.Line > 0:
		b.WriteString("line " + strconv.Itoa(p.Line) + ": ")
	}
	if p.Section != "" {
		b.WriteString("[" + p.Section + "] ")
	}
	if p.Key != "" {
		b.WriteString(p.Key + ": ")
	}
	b.WriteString(p.Msg)
	return b.String()
}

// Report collects the problems found while loading a configuration, in the
// order they were found, so that all of them can be shown together. It is
// safe for concurrent use. The zero value is an empty report.
type Report struct {
	mu       sync.Mutex
	problems []Problem
}

// Add appends p to the report.
func (r *Report) Add(p Problem) {
	r.mu.Lock()
	r.problems = append(r.problems, p)
	r.mu.Unlock()
}

// Errorf records an error problem. Pass "" or 0 for the location parts that
// do not apply. The message must not contain secret values.
func (r *Report) Errorf(file string, line int, section, key, format string, args ...any) {
	r.Add(Problem{Severity: Error, File: file, Line: line, Section: section, Key: key, Msg: fmt.Sprintf(format, args...)})
}

// Warnf records a warning problem, located like Errorf.
func (r *Report) Warnf(file string, line int, section, key, format string, args ...any) {
	r.Add(Problem{Severity: Warning, File: file, Line: line, Section: section, Key: key, Msg: fmt.Sprintf(format, args...)})
}

// Problems returns a copy of the recorded problems in the order they were
// recorded. A nil report has none.
func (r *Report) Problems() []Problem {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]Problem, len(r.problems))
	copy(out, r.problems)
	return out
}

// HasErrors reports whether at least one error problem was recorded.
// Warnings do not count.
func (r *Report) HasErrors() bool {
	for _, p := range r.Problems() {
		if p.Severity == Error {
			return true
		}
	}
	return false
}

// ErrorCount returns how many error problems were recorded. A stage that
// adds problems can compare the count before and after to learn whether it
// found any errors of its own.
func (r *Report) ErrorCount() int {
	n := 0
	for _, p := range r.Problems() {
		if p.Severity == Error {
			n++
		}
	}
	return n
}

// Err returns nil when no error problem was recorded. Otherwise it returns
// an error whose message is a "config: ..." summary line followed by every
// error problem, one per line, in Problem.String form. Warnings are not
// included; read them from Problems.
func (r *Report) Err() error {
	var lines []string
	for _, p := range r.Problems() {
		if p.Severity == Error {
			lines = append(lines, p.String())
		}
	}
	switch len(lines) {
	case 0:
		return nil
	case 1:
		return errors.New("config: invalid configuration:\n" + lines[0])
	default:
		return fmt.Errorf("config: invalid configuration (%d errors):\n%s", len(lines), strings.Join(lines, "\n"))
	}
}

// HasErrorsAt reports whether an error was recorded about key in section,
// so that a later check of the same value does not add a second,
// misleading error (a value whose ${NAME} is unset is not worth judging).
func (r *Report) HasErrorsAt(section, key string) bool {
	for _, p := range r.Problems() {
		if p.Severity == Error && p.Section == section && p.Key == normKey(key) {
			return true
		}
	}
	return false
}
