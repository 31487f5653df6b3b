// Package groupfile reads Apache htgroup files ([authentication]
// groups_file, for types basic and flask-login), the format Apache's
// AuthGroupFile reads:
//
//	# comment
//	admins: alice
//	operators: alice bob "carol smith"
//	operators: dave
//
// One group a line: the group name, a colon, then the members separated by
// spaces or tabs. As in Apache: a line whose first non-blank character is
// # is a comment; blank lines are skipped; a member may be quoted with "
// or ' (to hold a space); a line ending in a single backslash continues on
// the next one (the backslash and the line break are removed, nothing is
// put in their place); a group named on several lines has the members of
// all of them (Apache's advice for long groups); a member named twice is
// one member.
//
// Where Apache shrugs, this package refuses the whole file, since a group
// file decides who may do what: a line without a colon, an empty or
// spaced group name, a group name holding a comma (groups travel
// comma-separated to the application), an unterminated quote, a control
// character or invalid UTF-8 are errors naming the line. The File type
// keeps a file current and fails closed when it breaks.
package groupfile

import (
	"bufio"
	"bytes"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxSize bounds a groups file: beyond it the file is refused.
const MaxSize = 4 << 20

// Table is a parsed groups file: each user's groups, sorted, without
// repeats.
type Table struct {
	byUser map[string][]string
	groups int
}

// GroupsOf returns name's groups, sorted (nil when none). The slice is
// shared: callers must not change it.
func (t *Table) GroupsOf(name string) []string {
	if t == nil {
		return nil
	}
	return t.byUser[name]
}

// Groups returns how many groups the table defines.
func (t *Table) Groups() int {
	if t == nil {
		return 0
	}
	return t.groups
}

// Users returns the names the table knows, sorted.
func (t *Table) Users() []string {
	if t == nil {
		return nil
	}
	out := make([]string, 0, len(t.byUser))
	for u := range t.byUser {
		out = append(out, u)
	}
	slices.Sort(out)
	return out
}

// LineError is a problem on one line of a groups file. It names the file
// and line and says what is wrong, never quoting more than a group name.
type LineError struct {
	File string
	Line int
	Msg  string
}

func (e *LineError) Error() string { return fmt.Sprintf("groupfile: %s:%d: %s", e.File, e.Line, e.Msg) }

// Parse reads a groups file's content; name is the file's name, for
// messages. The first problem found is returned and the table is nil.
func Parse(name string, data []byte) (*Table, error) {
	if len(data) > MaxSize {
		return nil, &LineError{File: name, Msg: fmt.Sprintf("the file is larger than %d bytes", MaxSize)}
	}
	if !utf8.Valid(data) {
		return nil, &LineError{File: name, Line: 1 + bytes.Count(data[:invalidAt(data)], []byte("\n")), Msg: "not valid UTF-8"}
	}
	members := map[string]map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), MaxSize+1)
	n, start := 0, 0
	var logical strings.Builder
	for sc.Scan() {
		n++
		line := strings.TrimSuffix(sc.Text(), "\r")
		if logical.Len() == 0 {
			start = n
		}
		if strings.HasSuffix(line, `\`) && !strings.HasSuffix(line, `\\`) {
			logical.WriteString(line[:len(line)-1])
			continue
		}
		logical.WriteString(line)
		text := logical.String()
		logical.Reset()
		if err := parseLine(text, members); err != "" {
			return nil, &LineError{File: name, Line: start, Msg: err}
		}
	}
	if logical.Len() > 0 {
		if err := parseLine(logical.String(), members); err != "" {
			return nil, &LineError{File: name, Line: start, Msg: err}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, &LineError{File: name, Line: n + 1, Msg: err.Error()}
	}
	t := &Table{byUser: map[string][]string{}, groups: len(members)}
	for g, ms := range members {
		for m := range ms {
			t.byUser[m] = append(t.byUser[m], g)
		}
	}
	for u := range t.byUser {
		slices.Sort(t.byUser[u])
	}
	return t, nil
}

// invalidAt returns the offset of the first byte that is not valid UTF-8.
func invalidAt(b []byte) int {
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size <= 1 {
			return i
		}
		i += size
	}
	return len(b)
}

// parseLine adds one logical line's group and members to members, or says
// what is wrong with it.
func parseLine(line string, members map[string]map[string]bool) string {
	if strings.ContainsFunc(line, func(r rune) bool { return unicode.IsControl(r) && r != '\t' }) {
		return "a control character"
	}
	line = strings.TrimSpace(line)
	if line == "" || line[0] == '#' {
		return ""
	}
	group, rest, ok := strings.Cut(line, ":")
	if !ok {
		return "no colon: write GROUP: USER1 USER2"
	}
	group = strings.TrimSpace(group)
	switch {
	case group == "":
		return "no group name before the colon"
	case strings.ContainsFunc(group, unicode.IsSpace):
		return "a group name holds a space"
	case strings.Contains(group, ","):
		return fmt.Sprintf("the group name %q holds a comma", group)
	}
	ms, err := words(rest)
	if err != "" {
		return err
	}
	set := members[group]
	if set == nil {
		set = map[string]bool{}
		members[group] = set
	}
	for _, m := range ms {
		set[m] = true
	}
	return ""
}

// words splits a member list as Apache's ap_getword_conf does: at spaces
// and tabs, with "..." and '...' holding spaces (a backslash escapes the
// quote inside them).
func words(s string) ([]string, string) {
	var out []string
	for {
		s = strings.TrimLeft(s, " \t")
		if s == "" {
			return out, ""
		}
		q := s[0]
		if q != '"' && q != '\'' {
			i := strings.IndexAny(s, " \t")
			if i < 0 {
				i = len(s)
			}
			out = append(out, s[:i])
			s = s[i:]
			continue
		}
		var b strings.Builder
		i := 1
		for ; i < len(s) && s[i] != q; i++ {
			if s[i] == '\\' && i+1 < len(s) && s[i+1] == q {
				i++
			}
			b.WriteByte(s[i])
		}
		if i >= len(s) {
			return nil, "a quote is not closed"
		}
		if b.Len() > 0 {
			out = append(out, b.String())
		}
		s = s[i+1:]
	}
}
