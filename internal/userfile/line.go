package userfile

import "strings"

// bom is the UTF-8 byte order mark some editors put at the start of a file.
const bom = "\ufeff"

// lineKind says what one line of a user file holds.
type lineKind int

const (
	lineBlank     lineKind = iota // empty or whitespace only
	lineComment                   // first non-blank character is '#'
	lineMalformed                 // text without a ':'
	lineUser                      // name ':' value
)

// splitLine classifies one line, given without its "\n" (a trailing "\r" is
// tolerated), the way Flask-era code read the file: surrounding whitespace
// is dropped, then the line is split at its first ':'. Bcrypt hashes hold
// no ':' and names may not, so the first ':' is always the separator.
// The name and value are returned unchecked.
func splitLine(raw string) (kind lineKind, name, value string) {
	s := strings.TrimSpace(strings.TrimSuffix(raw, "\r"))
	switch {
	case s == "":
		return lineBlank, "", ""
	case strings.HasPrefix(s, "#"):
		return lineComment, "", ""
	}
	name, value, ok := strings.Cut(s, ":")
	if !ok {
		return lineMalformed, "", ""
	}
	return lineUser, name, value
}

// splitLines splits a file's text into lines without their "\n", after
// dropping a leading byte order mark. The last element is what follows the
// final "\n": empty when the file ends with a newline.
func splitLines(text string) (lines []string, hadBOM bool) {
	text, hadBOM = strings.CutPrefix(text, bom)
	return strings.Split(text, "\n"), hadBOM
}
