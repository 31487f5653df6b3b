package ini

import (
	"fmt"
	"strings"
	"testing"
)

// dump renders a parsed file as "[section]" lines followed by
// "key@line=quoted value" lines, DEFAULT first when present, for comparison.
func dump(f *File) string {
	var b strings.Builder
	for _, s := range f.allSections() {
		fmt.Fprintf(&b, "[%s]\n", s.name)
		for _, k := range s.keys {
			e := s.entries[k]
			fmt.Fprintf(&b, "%s@%d=%q\n", k, e.line, e.value)
		}
	}
	return b.String()
}

// problemLines renders problems as "severity:line:key" for comparison.
func problemLines(rep *Report) string {
	var out []string
	for _, p := range rep.Problems() {
		out = append(out, fmt.Sprintf("%s:%d:%s", p.Severity, p.Line, p.Key))
	}
	return strings.Join(out, " ")
}

// parseCases are the parser's table: input, the dump of the parsed file and
// the "severity:line:key" list of problems. compat_test.go also runs their
// inputs through Python's configparser.
var parseCases = []struct {
	name, in, want, problems string
}{
	{"equals and colon", "[s]\na = 1\nb: 2\n", "[s]\na@2=\"1\"\nb@3=\"2\"\n", ""},
	{"first delimiter wins", "[s]\nurl = http://x:8080/a=b\nt: a=b\n", "[s]\nurl@2=\"http://x:8080/a=b\"\nt@3=\"a=b\"\n", ""},
	{"no space around delimiter", "[s]\na=1\nb:2\n", "[s]\na@2=\"1\"\nb@3=\"2\"\n", ""},
	{"empty value", "[s]\na =\nb:\n", "[s]\na@2=\"\"\nb@3=\"\"\n", ""},
	{"keys lower-cased and trimmed", "[s]\n  User Name\t=  Bob  \n", "[s]\nuser name@2=\"Bob\"\n", ""},
	{"values trimmed not unquoted", "[s]\na = \"quoted\" \nb = 'x'\n", "[s]\na@2=\"\\\"quoted\\\"\"\nb@3=\"'x'\"\n", ""},
	{"percent not special", "[s]\na = 100%\nb = %(x)s\n", "[s]\na@2=\"100%\"\nb@3=\"%(x)s\"\n", ""},
	{"full-line comments", "# top\n; top\n[s]\n# a = 1\n  ; b = 2\nc = 3\n", "[s]\nc@6=\"3\"\n", ""},
	{"inline comments kept", "[s]\npassword = abc # x\nb = c ; d\n", "[s]\npassword@2=\"abc # x\"\nb@3=\"c ; d\"\n", ""},
	{"section names case-sensitive", "[S]\na=1\n[s]\na=2\n", "[S]\na@2=\"1\"\n[s]\na@4=\"2\"\n", ""},
	{"section name kept as written", "[ my sect ]\na=1\n", "[ my sect ]\na@2=\"1\"\n", ""},
	{"text after header ignored", "[s] ; note\na=1\n", "[s]\na@2=\"1\"\n", ""},
	{"header up to last bracket", "[a]b]\nx=1\n", "[a]b]\nx@2=\"1\"\n", ""},
	{"empty brackets are not a header", "[s]\n[]\n", "[s]\n", "error:2:"},
	{"continuation lines", "[s]\nusers = a\n  b\n\tc\nnext = 1\n", "[s]\nusers@2=\"a\\nb\\nc\"\nnext@5=\"1\"\n", ""},
	{"blank line inside value kept", "[s]\na = 1\n\n  2\n", "[s]\na@2=\"1\\n\\n2\"\n", ""},
	{"trailing blank lines dropped", "[s]\na = 1\n  2\n\n\n[t]\n", "[s]\na@2=\"1\\n2\"\n[t]\n", ""},
	{"comment inside value skipped", "[s]\na = 1\n  # no\n  2\n", "[s]\na@2=\"1\\n2\"\n", ""},
	{"empty first line then continuation", "[s]\na =\n  x\n  y\n", "[s]\na@2=\"\\nx\\ny\"\n", ""},
	{"indented keys at same depth", "[s]\n  a = 1\n  b = 2\n", "[s]\na@2=\"1\"\nb@3=\"2\"\n", ""},
	{"deeper key is a continuation", "[s]\na = 1\n  b = 2\n", "[s]\na@2=\"1\\nb = 2\"\n", ""},
	{"indented header is a continuation", "[s]\na = 1\n  [t]\n", "[s]\na@2=\"1\\n[t]\"\n", ""},
	{"no continuation after header", "[s]\n  a = 1\n", "[s]\na@2=\"1\"\n", ""},
	{"BOM skipped", "\uFEFF[s]\na=1\n", "[s]\na@2=\"1\"\n", ""},
	{"CRLF", "[s]\r\na = 1\r\n  2\r\nb = x y\r\n", "[s]\na@2=\"1\\n2\"\nb@4=\"x y\"\n", ""},
	{"lone CR ends a line", "[s]\ra = 1\rb = 2", "[s]\na@2=\"1\"\nb@3=\"2\"\n", ""},
	{"no final newline", "[s]\na = 1", "[s]\na@2=\"1\"\n", ""},
	{"empty input", "", "", ""},
	{"DEFAULT section", "[DEFAULT]\na = 1\n[s]\nb = 2\n", "[DEFAULT]\na@2=\"1\"\n[s]\nb@4=\"2\"\n", ""},
	{"DEFAULT may repeat", "[DEFAULT]\na = 1\n[DEFAULT]\nb = 2\n", "[DEFAULT]\na@2=\"1\"\nb@4=\"2\"\n", ""},
	{"missing header reported once", "a = 1\nb = 2\n[s]\nc = 3\n", "[s]\nc@4=\"3\"\n", "error:1:"},
	{"line without delimiter", "[s]\njust words\nb = 2\n", "[s]\nb@3=\"2\"\n", "error:2:"},
	{"error line keeps value open", "[s]\na = 1\noops\n  more\n", "[s]\na@2=\"1\\nmore\"\n", "error:3:"},
	{"no key before delimiter", "[s]\n= 1\n  2\n: x\n", "[s]\n", "error:2: error:3: error:4:"},
	{"duplicate key", "[s]\na = 1\nA = 2\n  cont\nb = 3\n", "[s]\na@2=\"1\"\nb@5=\"3\"\n", "error:3:a"},
	{"duplicate key in DEFAULT", "[DEFAULT]\na = 1\n[DEFAULT]\na = 2\n", "[DEFAULT]\na@2=\"1\"\n", "error:4:a"},
	{"duplicate section merged", "[s]\na = 1\n[t]\n[s]\nb = 2\na = 3\n", "[s]\na@2=\"1\"\nb@5=\"2\"\n[t]\n", "error:4: error:6:a"},
	{"invalid UTF-8 reported once", "[s]\na = \xff\nb = \xfe\n", "[s]\na@2=\"\\xff\"\nb@3=\"\\xfe\"\n", "error:2:"},
	{"unicode spaces trimmed", "[s]\n\u00a0a\u3000=\x1c1\u2003\n", "[s]\na@2=\"1\"\n", ""},
	{"NUL kept", "[s]\na = x\x00y\n", "[s]\na@2=\"x\\x00y\"\n", ""},
}

func TestParse(t *testing.T) {
	for _, tt := range parseCases {
		t.Run(tt.name, func(t *testing.T) {
			rep := &Report{}
			f := Parse("test.ini", strings.NewReader(tt.in), rep)
			if got := dump(f); got != tt.want {
				t.Errorf("parsed\n%s\nwant\n%s", got, tt.want)
			}
			if got := problemLines(rep); got != tt.problems {
				t.Errorf("problems %q, want %q (%v)", got, tt.problems, rep.Problems())
			}
		})
	}
}

func TestParseNeverEchoesLines(t *testing.T) {
	const secret = "hunter2-Secret"
	in := secret + "\n[s]\n" + secret + "\nx = 1\nx = " + secret + "\n= " + secret + "\n[s]\n\xff" + secret + "\n"
	rep := &Report{}
	Parse("test.ini", strings.NewReader(in), rep)
	if len(rep.Problems()) < 5 {
		t.Fatalf("expected at least 5 problems, got %v", rep.Problems())
	}
	for _, p := range rep.Problems() {
		if strings.Contains(p.String(), "hunter2") {
			t.Errorf("problem echoes a secret: %s", p)
		}
	}
}

func TestParseLongLine(t *testing.T) {
	long := strings.Repeat("x", 1<<20)
	f := Parse("t", strings.NewReader("[s]\nk = "+long+"\n"), nil)
	if v, _ := f.Section("s").Lookup("k"); v != long {
		t.Fatalf("long value lost: got %d bytes", len(v))
	}
	if f.Report().HasErrors() {
		t.Fatal(f.Report().Err())
	}
}

func TestParseTooLarge(t *testing.T) {
	rep := &Report{}
	f := Parse("big", strings.NewReader(strings.Repeat("#\n", maxFileSize/2+1)), rep)
	if !rep.HasErrors() || len(f.Sections()) != 0 {
		t.Fatalf("want a size error, got %v", rep.Problems())
	}
}

func TestFileSections(t *testing.T) {
	f := Parse("t", strings.NewReader("[b]\n[DEFAULT]\nk = d\n[a]\n[b]\n"), nil)
	if got := strings.Join(f.Sections(), ","); got != "b,a" {
		t.Errorf("Sections() = %q, want b,a", got)
	}
	for name, want := range map[string]bool{"a": true, "b": true, "B": false, "c": false, DefaultSection: false} {
		if f.Has(name) != want {
			t.Errorf("Has(%q) = %v, want %v", name, !want, want)
		}
	}
	if v, _ := f.Section("a").Lookup("k"); v != "d" {
		t.Errorf("[a] does not inherit DEFAULT: %q", v)
	}
	if v, _ := f.Section(DefaultSection).Lookup("k"); v != "d" {
		t.Errorf("Section(DEFAULT) = %q", v)
	}
	missing := f.Section("c")
	if missing == nil || missing.Has("k") || len(missing.Keys()) != 0 || missing.Name() != "c" {
		t.Errorf("missing section is not empty: %+v", missing)
	}
}
