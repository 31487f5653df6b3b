package ini

import (
	"os"
	"strings"
)

// Expand replaces every "${NAME}" in every value of the file, [DEFAULT]
// included, with lookup(NAME); a nil lookup means os.LookupEnv. NAME is
// letters, digits and underscores, not starting with a digit.
//
// The rules are narrower than os.ExpandEnv's on purpose:
//
//   - Only "${" starts a reference. A "$" followed by anything else is an
//     ordinary character, so bcrypt hashes such as "$2b$12$..." written in
//     the file stay intact, and "$$" is not an escape.
//   - Expansion is a single pass: text coming from a variable is not scanned
//     again, so a variable holding "$2y$12$..." or even "${X}" is used as is.
//   - An unset NAME is an error problem naming the variable and the key; it
//     never becomes an empty string. A "${" with no closing "}" and a "${...}"
//     whose name is not valid are errors too. In each case the reference is
//     left in the value as written, so the value is never silently emptied.
//
// Problems are located at the key's line; they never show the value. Expand
// runs once per File: later calls do nothing, so a value is never expanded
// twice.
func (f *File) Expand(lookup func(string) (string, bool)) {
	if f.expanded {
		return
	}
	f.expanded = true
	if lookup == nil {
		lookup = os.LookupEnv
	}
	for _, s := range f.allSections() {
		for _, k := range s.keys {
			e := s.entries[k]
			e.literal = hasLiteralText(e.value)
			e.value = expandValue(e.value, lookup, func(format string, args ...any) {
				f.Report().Errorf(f.Name, e.line, s.name, k, format, args...)
			})
		}
	}
}

// expandValue performs the single-pass "${NAME}" replacement on v, calling
// fail for each reference it cannot replace.
func expandValue(v string, lookup func(string) (string, bool), fail func(format string, args ...any)) string {
	if !strings.Contains(v, "${") {
		return v
	}
	var b strings.Builder
	for {
		i := strings.Index(v, "${")
		if i < 0 {
			b.WriteString(v)
			return b.String()
		}
		b.WriteString(v[:i])
		end := strings.IndexByte(v[i+2:], '}')
		if end < 0 {
			fail(`"${" without a closing "}"`)
			b.WriteString(v[i:])
			return b.String()
		}
		name := v[i+2 : i+2+end]
		ref := v[i : i+3+end]
		v = v[i+3+end:]
		if !validName(name) {
			fail(`"${...}" holds an invalid variable name; names are letters, digits and "_", not starting with a digit`)
			b.WriteString(ref)
			continue
		}
		val, ok := lookup(name)
		if !ok {
			fail("environment variable %s is not set (referenced as ${%s})", name, name)
			b.WriteString(ref)
			continue
		}
		b.WriteString(val)
	}
}

// validName reports whether name is a shell-style variable name:
// [A-Za-z_][A-Za-z0-9_]*.
func validName(name string) bool {
	if name == "" {
		return false
	}
	for i, c := range []byte(name) {
		switch {
		case c == '_', c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z':
		case c >= '0' && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// hasLiteralText reports whether v holds text other than "${...}"
// references, i.e. whether a value was written into the file itself rather
// than taken from the environment.
func hasLiteralText(v string) bool {
	for {
		i := strings.Index(v, "${")
		if i < 0 {
			return strings.TrimFunc(v, IsSpace) != ""
		}
		if strings.TrimFunc(v[:i], IsSpace) != "" {
			return true
		}
		end := strings.IndexByte(v[i+2:], '}')
		if end < 0 {
			return true
		}
		v = v[i+3+end:]
	}
}
