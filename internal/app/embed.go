package app

import (
	"maps"
	"slices"
	"strings"

	"github.com/backupweb/backupweb/internal/config"
	"github.com/backupweb/backupweb/internal/ini"
)

// This file holds what the root package (a Go program embedding backupweb)
// needs besides BuildProvider: the [authentication] keys as a map, read
// from a file and turned back into the section the loaders read, by the
// same parser and expansion as the configuration file, so that a map is
// checked exactly as check-config checks a file.

// SectionOf returns the [authentication] section that a file holding
// config's keys would give: the keys are written as "key = value" lines
// under an [authentication] header, parsed as the configuration file is
// (keys case-insensitive, values trimmed) and expanded (${NAME} from
// lookupEnv; nil means os.LookupEnv). Problems are in the section's
// report, named by key: a key given twice in different letter cases, and
// a key or value that one line of a file could not hold (a key with "=",
// ":", "[" or a line break, or starting with "#" or ";"; a value with a
// line break), which is left out.
func SectionOf(config map[string]string, lookupEnv func(string) (string, bool)) *ini.Section {
	s, _ := SectionsOf(config, nil, lookupEnv)
	return s
}

// SectionsOf is SectionOf with the keys of the [ldap] section too (users
// = ldap): both sections come from one file, and share its report. ldap
// is nil when ldapKeys is empty.
func SectionsOf(config, ldapKeys map[string]string, lookupEnv func(string) (string, bool)) (s, ldap *ini.Section) {
	rep := &ini.Report{}
	var b strings.Builder
	writeSection(&b, rep, Section, config)
	if len(ldapKeys) > 0 {
		writeSection(&b, rep, LDAPSection, ldapKeys)
	}
	f := ini.Parse("", strings.NewReader(b.String()), rep, Section)
	f.Expand(lookupEnv)
	if len(ldapKeys) > 0 {
		ldap = f.Section(LDAPSection)
	}
	return f.Section(Section), ldap
}

// writeSection writes keys under a [name] header, recording in rep the
// keys it leaves out.
func writeSection(b *strings.Builder, rep *ini.Report, name string, keys map[string]string) {
	b.WriteString("[" + name + "]\n")
	seen := map[string]string{}
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		norm := strings.ToLower(strings.TrimFunc(k, ini.IsSpace))
		if msg := badEntry(norm, keys[k]); msg != "" {
			rep.Errorf("", 0, name, norm, "%s", msg)
			continue
		}
		if first, ok := seen[norm]; ok {
			rep.Errorf("", 0, name, norm, "is given twice, as %q and %q; keys are case-insensitive: give it once", first, k)
			continue
		}
		seen[norm] = k
		b.WriteString(norm + " = " + strings.ReplaceAll(keys[k], "\n", "\n\t") + "\n")
	}
}

// badEntry says why key and value cannot be written in the section, or
// "" when they can.
func badEntry(key, value string) string {
	switch {
	case key == "":
		return "a key must not be empty"
	case strings.ContainsAny(key, "=:[]\r\n") || strings.HasPrefix(key, "#") || strings.HasPrefix(key, ";"):
		return `is not a key: a key holds no "=", ":", "[", "]" or line break and does not start with "#" or ";"`
	case strings.Contains(value, "\r"):
		return "a value must not hold a carriage return; separate its lines with \"\\n\""
	}
	lines := strings.Split(value, "\n")
	for _, l := range lines[1:] {
		l = strings.TrimFunc(l, ini.IsSpace)
		if l == "" || strings.HasPrefix(l, "#") || strings.HasPrefix(l, ";") {
			return `a value's lines after its first must not be blank or start with "#" or ";" (a file could not hold them)`
		}
	}
	return ""
}

// ReadSection reads the configuration file at path and returns its
// [authentication] keys as written (not expanded: SectionOf expands them),
// under the rules serve applies to the file: the file must exist and be
// readable; a near miss of the section's name ([Authentication], [auth])
// and an [authentication] key in another section (its header commented
// out) are errors; no [authentication] section means type none (present
// is false then); a section without a type key is an error, never a
// silent none. Problems, with file and line, are in the returned report.
func ReadSection(path string) (m map[string]string, present bool, rep *ini.Report) {
	rep = &ini.Report{}
	f := ini.ReadFile(path, rep, Section)
	if rep.HasErrors() {
		return nil, false, rep
	}
	for _, name := range f.Sections() {
		if name == Section {
			continue
		}
		if _, ok := ini.Suggest(name, []string{Section}); ok {
			rep.Errorf(f.Name, f.Section(name).HeaderLine(), name, "", "is not [%s]; section names are case-sensitive: write [%s]", Section, Section)
		}
	}
	CheckPlacement(f, config.SectionKeys())
	s := f.Section(Section)
	switch {
	case !s.Present():
		return map[string]string{"type": "none"}, false, rep
	case !s.Has("type"):
		s.Errorf("", "has no type key; add a line type = <%s> (only a file without an [%s] section means type none)", strings.Join(Names(), "|"), Section)
	}
	m = map[string]string{}
	for _, k := range s.Keys() {
		m[k], _ = s.Lookup(k)
	}
	return m, true, rep
}

// ReadLDAPSection reads the configuration file at path and returns its
// [ldap] keys as written (not expanded), under the rules ReadSection
// applies to the file; present is false when it has no [ldap] section.
// Problems, with file and line, are in the returned report.
func ReadLDAPSection(path string) (m map[string]string, present bool, rep *ini.Report) {
	rep = &ini.Report{}
	f := ini.ReadFile(path, rep, Section, LDAPSection)
	if rep.HasErrors() {
		return nil, false, rep
	}
	s := f.Section(LDAPSection)
	if !s.Present() {
		return nil, false, rep
	}
	m = map[string]string{}
	for _, k := range s.Keys() {
		m[k], _ = s.Lookup(k)
	}
	return m, true, rep
}
