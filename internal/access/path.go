package access

import (
	"net/url"
	"path"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Readings returns the paths an application behind backupweb could take
// u's path to mean, and whether it is in canonical form (see Canonical).
// A canonical path has one reading, itself. Any other path has the path
// as decoded, and one reading for every combination of the ways common
// servers read more into a path (readers, in this order): percent-decoded
// once more, or until nothing is left to decode (%252e is "." to an
// application that decodes twice); bytes that are not UTF-8 read leniently
// (an overlong %c0%ae is "."; other stray bytes dropped); the path cut at
// its first NUL, or its control characters removed; the compatibility
// fold (see fold: a full-width "．" is "."); backslashes as slashes;
// trailing dots and spaces of a segment dropped (Windows: "admin." is
// "admin"); path parameters dropped (";jsessionid=..", so "/a/..;/b" is
// "/b", as Tomcat reads it). Each combination is then cleaned: dot
// segments resolved, doubled slashes merged (path.Clean, a final slash
// kept). Rules must decide every reading alike (see Rules.Decide), so
// that "/public/../admin" can never escape a rule for ^/admin nor borrow
// one for ^/public. The query and fragment are never part of a path. An
// opaque or relative path has no reading.
func Readings(u *url.URL) (paths []string, canonical bool) {
	if p, ok := Canonical(u); ok {
		return []string{p}, true
	}
	p := u.Path
	if u.Opaque != "" || p == "" || p[0] != '/' {
		return nil, false
	}
	paths = append(paths, p)
	for _, q := range readAll(p) {
		paths = appendNew(paths, cleanPath(q))
	}
	return paths, false
}

// reader is one way a server may read more into a path than backupweb
// does; a reader that does not apply returns its input.
type reader func(string) string

// readers are the choices Readings combines, in the order it applies
// them: each entry is the alternatives for one step (doing nothing is
// always a further alternative).
var readers = [][]reader{
	{unescapeOnce, unescapeAll},
	{lenientUTF8},
	{cutAtNUL, dropControls},
	{fold},
	{func(s string) string { return strings.ReplaceAll(s, `\`, "/") }},
	{trimSegments},
	{dropParams},
}

// readAll applies every combination of readers to p, in order, and
// returns the distinct results (p itself among them). A step whose
// alternatives change nothing adds no combination, so an ordinary
// non-canonical path ("/a/../b") costs one reading, and the most
// contrived one 3·2·3·2·2·2·2 = 288.
func readAll(p string) []string {
	out := []string{p}
	for _, alternatives := range readers {
		n := len(out)
		for i := range n {
			for _, read := range alternatives {
				if q := read(out[i]); q != out[i] {
					out = appendNew(out, q)
				}
			}
		}
	}
	return out
}

// cleanPath is path.Clean keeping a final slash.
func cleanPath(p string) string {
	c := path.Clean(p)
	if strings.HasSuffix(p, "/") && c != "/" {
		c += "/"
	}
	return c
}

// dropParams removes every segment's path parameters (";x=y").
func dropParams(p string) string {
	if !strings.Contains(p, ";") {
		return p
	}
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i], _, _ = strings.Cut(s, ";")
	}
	return strings.Join(segs, "/")
}

// trimSegments removes trailing dots and spaces from every segment, as
// Windows reads file names. A segment made of nothing else (but "." and
// "..", which path.Clean resolves) is read as "..", the reading that
// climbs.
func trimSegments(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		if s == "." || s == ".." {
			continue
		}
		t := strings.TrimRight(s, ". ")
		if t == "" && s != "" {
			t = ".."
		}
		segs[i] = t
	}
	return strings.Join(segs, "/")
}

// unescapeOnce decodes the %XX escapes left in an already decoded path,
// leaving a "%" that starts none as it is.
func unescapeOnce(p string) string {
	if !strings.Contains(p, "%") {
		return p
	}
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		if p[i] == '%' && i+2 < len(p) && isHex(p[i+1]) && isHex(p[i+2]) {
			b.WriteByte(unhex(p[i+1])<<4 | unhex(p[i+2]))
			i += 2
			continue
		}
		b.WriteByte(p[i])
	}
	return b.String()
}

// unescapeAll decodes until nothing is left to decode. Every round that
// changes the path shortens it, so it ends.
func unescapeAll(p string) string {
	for {
		q := unescapeOnce(p)
		if q == p {
			return p
		}
		p = q
	}
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c <= 'F':
		return c - 'A' + 10
	}
	return c - 'a' + 10
}

// lenientUTF8 reads p as a decoder that predates the ban on overlong forms
// does: a lead byte followed by enough continuation bytes is the code
// point they spell, however long the form (so %c0%ae and %e0%80%ae are
// "."); any other byte that is not UTF-8 is dropped.
func lenientUTF8(p string) string {
	if utf8.ValidString(p) {
		return p
	}
	var b strings.Builder
	for i := 0; i < len(p); {
		r, size := utf8.DecodeRuneInString(p[i:])
		if r != utf8.RuneError || size > 1 {
			b.WriteString(p[i : i+size])
			i += size
			continue
		}
		if r, n := overlong(p[i:]); n > 0 {
			b.WriteRune(r)
			i += n
			continue
		}
		i++
	}
	return b.String()
}

// overlong decodes one sequence of a lead byte and its continuation bytes
// without UTF-8's checks for the shortest form, and returns the code point
// and the sequence's length, or 0 when s does not start with one.
func overlong(s string) (rune, int) {
	c := s[0]
	var n int
	switch {
	case c&0xE0 == 0xC0:
		n = 2
	case c&0xF0 == 0xE0:
		n = 3
	case c&0xF8 == 0xF0:
		n = 4
	case c&0xFC == 0xF8:
		n = 5
	case c&0xFE == 0xFC:
		n = 6
	default:
		return 0, 0
	}
	if len(s) < n {
		return 0, 0
	}
	r := rune(c & (0x7F >> n))
	for i := 1; i < n; i++ {
		if s[i]&0xC0 != 0x80 {
			return 0, 0
		}
		r = r<<6 | rune(s[i]&0x3F)
	}
	if !utf8.ValidRune(r) {
		return 0, 0
	}
	return r, n
}

// cutAtNUL is p up to its first NUL, as a C string reads it.
func cutAtNUL(p string) string {
	before, _, _ := strings.Cut(p, "\x00")
	return before
}

// dropControls removes the control characters from p.
func dropControls(p string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return -1
		}
		return r
	}, p)
}

// compat maps every code point whose compatibility decomposition (Unicode
// NFKC) is made only of characters that give a path its structure (dot,
// slash, backslash, semicolon, percent sign, space) to that form. It is
// the whole of NFKC that can change how a path divides (a segment of
// full-width dots "．．" is ".." to an application that normalises), listed
// here rather than taken from golang.org/x/text, which the module does not
// otherwise use: the list was made by running norm.NFKC over every code
// point (golang.org/x/text v0.43.0, Unicode 15), and a code point's NFKC
// form never loses characters nor combines with a neighbour into a dot,
// so folding code point by code point is exact for these characters.
var compat = map[rune]string{
	0x2024: ".", 0x2025: "..", 0x2026: "...", 0xFE19: "...", 0xFE30: "..", 0xFE52: ".", 0xFF0E: ".",
	0xFF0F: "/", 0xFE68: `\`, 0xFF3C: `\`,
	0x037E: ";", 0xFE14: ";", 0xFE54: ";", 0xFF1B: ";",
	0xFE6A: "%", 0xFF05: "%",
	0x00A0: " ", 0x2000: " ", 0x2001: " ", 0x2002: " ", 0x2003: " ", 0x2004: " ", 0x2005: " ",
	0x2006: " ", 0x2007: " ", 0x2008: " ", 0x2009: " ", 0x200A: " ", 0x202F: " ", 0x205F: " ",
	0x3000: " ",
}

// folds reports whether the compatibility fold changes r.
func folds(r rune) bool {
	_, ok := compat[r]
	return ok
}

// fold replaces the code points of compat with their compatibility form.
func fold(p string) string {
	if !strings.ContainsFunc(p, folds) {
		return p
	}
	var b strings.Builder
	for _, r := range p {
		if f, ok := compat[r]; ok {
			b.WriteString(f)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// RequestURL reads the path and query of a forwarded request's URI
// (X-Forwarded-Uri, X-Original-URI: the request target as the client sent
// it, perhaps with a fragment) as a server reads a request line: a path
// ("//x" is the path //x, not a host) or an absolute http(s) URL (whose
// path and query count). It returns nil for anything else: the path is
// then unknown. The query is kept for the method-override parameter (see
// Target.WithOverrides); rules never match it.
func RequestURL(uri string) *url.URL {
	u, _ := ParseTarget(uri)
	if u == nil {
		return nil
	}
	return &url.URL{Path: u.Path, RawPath: u.RawPath, RawQuery: u.RawQuery}
}

// ParseTarget reads a request target as Go's server reads a request
// line's: origin form ("/a/b?q", "//x" is a path) or absolute form
// ("http://host/a?q", whose host it returns as well). A fragment is cut
// off first. It returns nil for anything else (a relative or opaque
// target, another scheme, a path that does not decode).
func ParseTarget(target string) (u *url.URL, host string) {
	target, _, _ = strings.Cut(target, "#")
	u, err := url.ParseRequestURI(target)
	if err != nil || u.Opaque != "" || u.Path == "" || u.Path[0] != '/' {
		return nil, ""
	}
	switch strings.ToLower(u.Scheme) {
	case "":
		return u, ""
	case "http", "https":
		if u.Host == "" {
			return nil, ""
		}
		return u, u.Host
	}
	return nil, ""
}
