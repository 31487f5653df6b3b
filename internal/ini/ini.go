package ini

import (
	"bytes"
	"io"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// DefaultSection is the name of configparser's special section: its keys are
// inherited by every section of the file that does not set them itself, and
// it is not listed by File.Sections.
const DefaultSection = "DEFAULT"

// maxFileSize bounds how much of a configuration file is read, so that a path
// pointing at a device or a huge file cannot exhaust memory. Real
// configuration files are a few kilobytes.
const maxFileSize = 16 << 20

// File is a parsed INI document. Build one with Parse; the zero value is an
// empty document. A File is not safe for concurrent use while Expand runs or
// while getters mark keys as used.
type File struct {
	// Name is the file name given to Parse, used to locate problems.
	Name string

	sections []*Section          // in file order, without DEFAULT
	byName   map[string]*Section // case-sensitive section names
	defaults *Section            // the DEFAULT section; nil when the file has none
	rep      *Report
	expanded bool
}

// Parse reads an INI document the way Python's
// configparser.ConfigParser(interpolation=None, strict=True) reads a file:
//
//   - "[name]" starts a section. The name is everything between the first
//     "[" and the last "]" of the line, kept as written (case and inner
//     spaces included); the rest of the line after that "]" is ignored.
//     A second section of the same name is an error; its keys are merged
//     into the first one. [DEFAULT] is special, see DefaultSection.
//   - "key = value" and "key: value" are split at the first "=" or ":".
//     Keys are trimmed and lower-cased, values trimmed. Quotes are kept and
//     "%" and "$" have no meaning here (see Expand for "${NAME}").
//   - A line whose first non-blank character is "#" or ";" is a comment.
//     There are no inline comments: "a = b # c" gives a the value "b # c".
//   - A line indented deeper than the key line that began a value continues
//     that value; the parts are joined with "\n". Blank lines inside such a
//     value are kept (configparser's empty_lines_in_values=True), trailing
//     blank lines are dropped, and comment lines inside it are skipped.
//   - Lines end with "\n", "\r\n" or "\r"; a UTF-8 byte order mark at the
//     start is skipped.
//
// Where configparser would raise an exception, Parse records an error in rep
// and goes on: a key before any section header (reported once), a line
// without "=" or ":", a line with nothing before its delimiter, a duplicate
// key in a section (the first value is kept), a duplicate section, text that
// is not valid UTF-8 (reported once). Problems carry the line number but never
// the line's text. If rep is nil a new Report is used, reachable through
// File.Report. Parse never panics.
//
// known names the sections the caller reads: an indented header of one of
// them, or of a near miss of one (see Suggest), is an error, since
// configparser reads it as a continuation line and every key below it
// would land in the section above.
func Parse(name string, r io.Reader, rep *Report, known ...string) *File {
	if rep == nil {
		rep = &Report{}
	}
	f := &File{Name: name, byName: map[string]*Section{}, rep: rep}
	data, err := io.ReadAll(io.LimitReader(r, maxFileSize+1))
	if err != nil {
		rep.Errorf(name, 0, "", "", "reading failed: %v", err)
	}
	if len(data) > maxFileSize {
		rep.Errorf(name, 0, "", "", "file is larger than %d MiB; is it really a configuration file?", maxFileSize>>20)
		return f
	}
	data = bytes.TrimPrefix(data, []byte("\uFEFF"))
	p := parser{f: f, known: known}
	n := 0
	for len(data) > 0 {
		n++
		line, rest := cutLine(data)
		p.line(n, string(line))
		data = rest
	}
	p.finish()
	return f
}

// cutLine splits off the first line of data, ending at "\n", "\r\n" or a
// lone "\r" (Python's universal newlines), without its terminator.
func cutLine(data []byte) (line, rest []byte) {
	i := bytes.IndexAny(data, "\r\n")
	if i < 0 {
		return data, nil
	}
	if data[i] == '\r' && i+1 < len(data) && data[i+1] == '\n' {
		return data[:i], data[i+2:]
	}
	return data[:i], data[i+1:]
}

// entry is one key of a section while and after parsing.
type entry struct {
	key   string
	line  int
	parts []string // the value's lines until finish joins them
	value string
	// literal tells whether the value, as written, holds text of its own
	// besides ${NAME} references (set by Expand).
	literal bool
}

// parser holds configparser's reading state between lines.
type parser struct {
	f        *File
	known    []string // section names whose indented header is an error
	cur      *Section // section being filled; nil before the first header
	opt      *entry   // value that an indented line would continue; nil when none
	indent   int      // indentation of the line that started opt
	noHeader bool     // the missing-header error was already recorded
	badUTF8  bool     // the invalid-text error was already recorded
}

// line handles one physical line, numbered from 1.
func (p *parser) line(n int, raw string) {
	rep := p.f.rep
	if !p.badUTF8 && !utf8.ValidString(raw) {
		p.badUTF8 = true
		rep.Errorf(p.f.Name, n, p.curName(), "", "the file is not valid UTF-8 text (first found on this line)")
	}
	text := strings.TrimFunc(raw, IsSpace)
	if strings.HasPrefix(text, "#") || strings.HasPrefix(text, ";") {
		return // comments neither end nor extend a value
	}
	if text == "" {
		if p.opt != nil {
			p.opt.parts = append(p.opt.parts, "")
		}
		return
	}
	indent := 0
	for _, r := range raw {
		if !IsSpace(r) {
			break
		}
		indent++
	}
	if p.opt != nil && indent > p.indent {
		if name, ok := sectionHeader(text); ok && (slices.Contains(p.known, name) || nearKnown(name, p.known)) {
			// configparser reads it as part of the value above, so every
			// key below would land in the wrong section.
			rep.Errorf(p.f.Name, n, p.cur.name, p.opt.key, "the [%s] header is indented, so it is read as part of the value of %s (line %d) and the keys below it stay in [%s]; remove the spaces before it", name, p.opt.key, p.opt.line, p.cur.name)
		}
		p.opt.parts = append(p.opt.parts, text)
		return
	}
	p.indent = indent
	if name, ok := sectionHeader(text); ok {
		p.header(n, name)
		return
	}
	if p.cur == nil {
		if !p.noHeader {
			p.noHeader = true
			rep.Errorf(p.f.Name, n, "", "", "missing section header: keys must come after a [section] line")
		}
		return
	}
	i := strings.IndexAny(text, "=:")
	if i < 0 {
		// configparser keeps the previous key open after this error, so a
		// deeper-indented line that follows still continues it.
		rep.Errorf(p.f.Name, n, p.cur.name, "", `line is neither a [section] header nor a "key = value" pair`)
		return
	}
	key := strings.ToLower(strings.TrimRightFunc(text[:i], IsSpace))
	value := strings.TrimFunc(text[i+1:], IsSpace)
	if key == "" {
		p.opt = nil
		rep.Errorf(p.f.Name, n, p.cur.name, "", `line has no key before its "=" or ":"`)
		return
	}
	e := &entry{key: key, line: n, parts: []string{value}}
	p.opt = e
	if first, dup := p.cur.entries[key]; dup {
		// e stays in p.opt only to swallow its continuation lines.
		rep.Errorf(p.f.Name, n, p.cur.name, key, "duplicate key (first set on line %d); set it once", first.line)
		return
	}
	p.cur.add(e)
}

// header switches to the section named name, found on line n.
func (p *parser) header(n int, name string) {
	p.opt = nil
	if name == DefaultSection {
		if p.f.defaults == nil {
			p.f.defaults = newSection(p.f, name, n)
		}
		p.cur = p.f.defaults
		return
	}
	if s, dup := p.f.byName[name]; dup {
		p.f.rep.Errorf(p.f.Name, n, name, "", "duplicate section (first started on line %d); its keys are merged into the first", s.line)
		p.cur = s
		return
	}
	s := newSection(p.f, name, n)
	p.f.sections = append(p.f.sections, s)
	p.f.byName[name] = s
	p.cur = s
}

// finish joins multi-line values and links sections to DEFAULT.
func (p *parser) finish() {
	for _, s := range p.f.allSections() {
		if s != p.f.defaults {
			s.defaults = p.f.defaults
		}
		for _, e := range s.entries {
			e.value = strings.TrimRightFunc(strings.Join(e.parts, "\n"), IsSpace)
			e.parts = nil
		}
	}
}

// curName is the name of the section being read, "" before the first one.
func (p *parser) curName() string {
	if p.cur == nil {
		return ""
	}
	return p.cur.name
}

// sectionHeader matches configparser's SECTCRE, `\[(?P<header>.+)\]`, on a
// stripped line: a "[" first, then the longest non-empty text up to a "]".
func sectionHeader(text string) (string, bool) {
	if !strings.HasPrefix(text, "[") {
		return "", false
	}
	j := strings.LastIndexByte(text, ']')
	if j < 2 {
		return "", false
	}
	return text[1:j], true
}

// IsSpace is Python's str.isspace for one character: Unicode white space
// plus the four ASCII separators U+001C..U+001F, which Python also strips.
// Parse trims keys, values and lines with it.
func IsSpace(r rune) bool {
	return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f)
}

// Sections returns the names of the file's sections in file order, without
// DEFAULT (as configparser's sections() does).
func (f *File) Sections() []string {
	out := make([]string, 0, len(f.sections))
	for _, s := range f.sections {
		out = append(out, s.name)
	}
	return out
}

// Has reports whether the file has a section of exactly that name. Like
// configparser's has_section, it is false for DEFAULT.
func (f *File) Has(name string) bool {
	_, ok := f.byName[name]
	return ok
}

// Section returns the section called name (case-sensitive), or DEFAULT's
// keys for DefaultSection. A missing section gives an empty Section, never
// nil, whose getters return their defaults and whose problems are still
// recorded in the file's report; it does not inherit DEFAULT's keys, so
// that a missing [authentication] stays "no authentication".
func (f *File) Section(name string) *Section {
	if s, ok := f.byName[name]; ok {
		return s
	}
	if name == DefaultSection && f.defaults != nil {
		return f.defaults
	}
	return newSection(f, name, 0)
}

// Report returns the report the file's problems are recorded in.
func (f *File) Report() *Report {
	if f.rep == nil {
		f.rep = &Report{}
	}
	return f.rep
}

// allSections returns DEFAULT (when present) and then the other sections.
func (f *File) allSections() []*Section {
	if f.defaults == nil {
		return f.sections
	}
	return append([]*Section{f.defaults}, f.sections...)
}

// nearKnown reports whether a section name is a near miss of a known one.
func nearKnown(name string, known []string) bool {
	_, ok := Suggest(name, known)
	return ok
}
