package ini

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Section is one [section] of a File: its keys in file order with their
// values and line numbers, the set of keys a getter has read, and the Report
// that getters record problems in. Keys of the file's [DEFAULT] section are
// inherited when the section does not set them.
//
// Getters never stop at a bad value: they record an error located at the
// key (never quoting the value, which may be a secret) and return the
// default, so one run finds every mistake. A Section is not safe for
// concurrent use; read it once at start-up.
type Section struct {
	file     string
	name     string
	line     int // line of the header; 0 for a missing section
	keys     []string
	entries  map[string]*entry
	used     map[string]bool
	defaults *Section
	rep      *Report
}

// newSection returns an empty section of f that starts on line (0: absent).
func newSection(f *File, name string, line int) *Section {
	return &Section{file: f.Name, name: name, line: line, entries: map[string]*entry{}, rep: f.Report()}
}

// add appends a new key to the section.
func (s *Section) add(e *entry) {
	s.keys = append(s.keys, e.key)
	s.entries[e.key] = e
}

// find returns the entry for key, from the section or else from DEFAULT.
func (s *Section) find(key string) *entry {
	key = normKey(key)
	if e, ok := s.entries[key]; ok {
		return e
	}
	if s.defaults != nil {
		if e, ok := s.defaults.entries[key]; ok {
			return e
		}
	}
	return nil
}

// normKey lower-cases and trims a key the way Parse does.
func normKey(key string) string {
	return strings.ToLower(strings.TrimFunc(key, IsSpace))
}

// Name returns the section's name as written in its header.
func (s *Section) Name() string { return s.name }

// Keys returns the section's keys, lower-cased, in file order, followed by
// the keys inherited from [DEFAULT] that the section does not set (as
// configparser's options() does).
func (s *Section) Keys() []string {
	out := append([]string(nil), s.keys...)
	if s.defaults != nil {
		for _, k := range s.defaults.keys {
			if _, own := s.entries[k]; !own {
				out = append(out, k)
			}
		}
	}
	return out
}

// Present reports whether the section appears in the file (its header was
// read), as opposed to a missing section's empty stand-in.
func (s *Section) Present() bool { return s.line > 0 }

// HeaderLine returns the line of the section's header, 0 for a missing
// section.
func (s *Section) HeaderLine() int { return s.line }

// Literal reports whether key is set and its value, as written in the file,
// holds text of its own besides ${NAME} references (known once File.Expand
// has run): a secret written into the file itself. It does not mark the
// key as used.
func (s *Section) Literal(key string) bool {
	e := s.find(key)
	return e != nil && e.literal
}

// OwnKeys returns the keys set in the section itself, lower-cased, in file
// order, without those inherited from [DEFAULT].
func (s *Section) OwnKeys() []string { return append([]string(nil), s.keys...) }

// Has reports whether key is set, without marking it as used.
func (s *Section) Has(key string) bool { return s.find(key) != nil }

// Lookup returns the value of key (matched case-insensitively) and whether
// it is set, and marks the key as used (see Unused).
func (s *Section) Lookup(key string) (value string, ok bool) {
	e := s.find(key)
	if e == nil {
		return "", false
	}
	if s.used == nil {
		s.used = map[string]bool{}
	}
	s.used[e.key] = true
	return e.value, true
}

// Unused returns the keys (in Keys order) that no getter has read yet, so
// that the code interpreting a section can warn about keys it does not know.
func (s *Section) Unused() []string {
	var out []string
	for _, k := range s.Keys() {
		if !s.used[k] {
			out = append(out, k)
		}
	}
	return out
}

// Line returns the line where key was set, 0 when it is not set.
func (s *Section) Line(key string) int {
	if e := s.find(key); e != nil {
		return e.line
	}
	return 0
}

// String returns the value of key, or def when the key is not set. A key set
// to an empty value gives "".
func (s *Section) String(key, def string) string {
	if v, ok := s.Lookup(key); ok {
		return v
	}
	return def
}

// Require returns the value of key. When the key is absent or empty it
// records the error "missing required key; ..." with a hint on how to add it,
// and returns "".
func (s *Section) Require(key string) string {
	return s.RequireHint(key, fmt.Sprintf("add a line %q under [%s]", normKey(key)+" = ...", s.name))
}

// RequireHint is Require with the caller's own hint, for example
// "set it to the OAuth client id given by the identity provider".
func (s *Section) RequireHint(key, hint string) string {
	v, ok := s.Lookup(key)
	switch {
	case !ok:
		s.Errorf(key, "missing required key; %s", hint)
	case v == "":
		s.Errorf(key, "missing required key (its value is empty); %s", hint)
	}
	return v
}

// boolWords are configparser's BOOLEAN_STATES.
var boolWords = map[string]bool{
	"1": true, "yes": true, "true": true, "on": true,
	"0": false, "no": false, "false": false, "off": false,
}

// Bool returns key read as a boolean in configparser's spellings, 1, yes,
// true, on, 0, no, false, off, in any case. An absent key gives def; any
// other value, the empty one included, is an error naming the spellings and
// gives def.
func (s *Section) Bool(key string, def bool) bool {
	v, ok := s.Lookup(key)
	if !ok {
		return def
	}
	if b, ok := boolWords[strings.ToLower(v)]; ok {
		return b
	}
	s.Errorf(key, "not a boolean; write one of 1, yes, true, on, 0, no, false, off (any case)")
	return def
}

// Int returns key read as a decimal integer between min and max inclusive.
// An absent key gives def; a malformed or out-of-range value is an error and
// gives def.
func (s *Section) Int(key string, def, min, max int) int {
	v, ok := s.Lookup(key)
	if !ok {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < min || n > max {
		s.Errorf(key, "must be a whole number from %d to %d", min, max)
		return def
	}
	return n
}

// Duration returns key read as a positive duration in Go's syntax ("90s",
// "15m", "12h", "1h30m"); a bare whole number means seconds. Days are not
// accepted. An absent key gives def; anything else is an error and gives def.
func (s *Section) Duration(key string, def time.Duration) time.Duration {
	v, ok := s.Lookup(key)
	if !ok {
		return def
	}
	var d time.Duration
	var err error
	if n, aerr := strconv.ParseInt(v, 10, 64); aerr == nil {
		if n > math.MaxInt64/int64(time.Second) {
			n = -1
		}
		d = time.Duration(n) * time.Second
	} else {
		d, err = time.ParseDuration(v)
	}
	if err != nil || d <= 0 {
		s.Errorf(key, `must be a duration greater than zero such as "90s", "15m" or "12h" (a bare number means seconds)`)
		return def
	}
	return d
}

// List returns key split at commas and line breaks, each item trimmed, empty
// items dropped. An absent or empty key gives nil. Line breaks count as
// separators so that a list may also be written as an indented multi-line
// value.
func (s *Section) List(key string) []string {
	v, _ := s.Lookup(key)
	var out []string
	for _, item := range strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == '\n' }) {
		if item = strings.TrimFunc(item, IsSpace); item != "" {
			out = append(out, item)
		}
	}
	return out
}

// Errorf records an error located at key: the key's line when it is set,
// else the section header's line. An empty key locates the problem at the
// section itself. The message must not contain secret values.
//
// When the key's value holds what looks like an inline comment (" #" or
// " ;"), the message says that the format has none, so that a pasted
// "second_factor = optional ; or required" is explained, not only refused.
func (s *Section) Errorf(key, format string, args ...any) {
	file, line := s.where(key)
	msg := fmt.Sprintf(format, args...)
	if e := s.find(key); key != "" && e != nil && !strings.Contains(msg, "inline comment") {
		msg += InlineCommentHint(e.value)
	}
	s.Report().Errorf(file, line, s.name, normKey(key), "%s", msg)
}

// InlineCommentHint explains a value that holds " #" or " ;" (or a tab
// before either): the format has no inline comments, so text pasted after
// the value became part of it. It says so without quoting the value, which
// may be a secret, and returns "" for any other value.
func InlineCommentHint(value string) string {
	for _, c := range []string{" #", " ;", "\t#", "\t;"} {
		if strings.Contains(value, c) {
			return "; the value contains \" #\" or \" ;\", which looks like an inline comment, but comments must be on lines of their own: everything after = is part of the value"
		}
	}
	return ""
}

// Warnf records a warning located like Errorf.
func (s *Section) Warnf(key, format string, args ...any) {
	file, line := s.where(key)
	s.Report().Warnf(file, line, s.name, normKey(key), format, args...)
}

// where returns the file and line a problem about key belongs to.
func (s *Section) where(key string) (string, int) {
	if key != "" {
		if e := s.find(key); e != nil {
			return s.file, e.line
		}
	}
	return s.file, s.line
}

// Report returns the report the section's problems are recorded in.
func (s *Section) Report() *Report {
	if s.rep == nil {
		s.rep = &Report{}
	}
	return s.rep
}
