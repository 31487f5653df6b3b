package ini

import (
	"errors"
	"strings"
	"testing"
)

// atKey and atLine are problems in the one shape, as other packages make
// them; warn marks one as a warning.
type (
	atKey  struct{ key, msg string }
	atLine struct {
		file string
		line int
		msg  string
	}
	warn struct{ error }
)

func (e atKey) Error() string                 { return e.key + ": " + e.msg }
func (e atKey) Place() (string, int, string)  { return "", 0, e.key }
func (e atKey) Detail() string                { return e.msg }
func (e atLine) Error() string                { return e.file + ": " + e.msg }
func (e atLine) Place() (string, int, string) { return e.file, e.line, "" }
func (e atLine) Detail() string               { return e.msg }
func (w warn) IsWarning() bool                { return true }
func (w warn) Unwrap() error                  { return w.error }

// TestRecord checks that a problem is recorded by what it does: at its
// key's line or at its file's line, as a warning when it says so, joined
// ones each on its own, and a second error at a key that has one left out.
func TestRecord(t *testing.T) {
	tests := []struct {
		name string
		errs []error
		want []string
	}{
		{"at a key", []error{atKey{"realm", "bad"}}, []string{"error: t.ini:3: [authentication] realm: bad"}},
		{"warning at a key", []error{warn{atKey{"realm", "odd"}}}, []string{"warning: t.ini:3: [authentication] realm: odd"}},
		{"at a file's line", []error{atLine{"users", 3, "malformed"}}, []string{"error: users:3: malformed"}},
		{"warning about a whole file", []error{warn{atLine{"users", 0, "mixed"}}}, []string{"warning: users: mixed"}},
		{"no place", []error{errors.New("plain")}, []string{"error: t.ini:1: [authentication] plain"}},
		{"joined", []error{errors.Join(atKey{"realm", "one"}, atKey{"type", "two"})}, []string{"error: t.ini:3: [authentication] realm: one", "error: t.ini:2: [authentication] type: two"}},
		{"one error a key", []error{atKey{"realm", "first"}, atKey{"realm", "second"}, warn{atKey{"realm", "note"}}},
			[]string{"error: t.ini:3: [authentication] realm: first", "warning: t.ini:3: [authentication] realm: note"}},
		{"nil", []error{nil}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := Parse("t.ini", strings.NewReader("[authentication]\ntype = basic\nrealm = x\n"), nil)
			f.Section("authentication").Record(tt.errs...)
			var got []string
			for _, p := range f.Report().Problems() {
				got = append(got, p.String())
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}
