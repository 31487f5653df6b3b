package ini

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// render writes f back as INI text that Parse reads to the same sections,
// keys and values: DEFAULT first, one "key = value" line per key, further
// lines of a value indented by a tab.
func render(f *File) string {
	var b strings.Builder
	for _, s := range f.allSections() {
		b.WriteString("[" + s.name + "]\n")
		for _, k := range s.keys {
			b.WriteString(k + " = " + strings.ReplaceAll(s.entries[k].value, "\n", "\n\t") + "\n")
		}
	}
	return b.String()
}

func FuzzParse(f *testing.F) {
	seeds := []string{
		"",
		"[server]\nlisten = 127.0.0.1:8080\ntrusted_proxies = 10.0.0.1, 10.0.0.0/8\n",
		"[authentication]\ntype = basic\nuse_bcrypt = True\npassword = $2b$12$R9h/cIPz0gi.URNNX3kh2OPST9/PgBkqquzi.Ss7KIUgO2t0jWMUW\n",
		"\uFEFF[a]\r\nk: v # not a comment\r\n  more\r\n\r\n; c\r\n",
		"k = before header\n[s]\nno delimiter\nk = 1\nK = 2\n[s]\n= v\n",
		"[DEFAULT]\nd = ${HOME}\n[x]\nv = ${UNTERMINATED\n[]\n[a]b]\n",
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		rep := &Report{}
		file := Parse("fuzz.ini", bytes.NewReader(data), rep)
		lines := bytes.Count(data, []byte("\n")) + bytes.Count(data, []byte("\r")) + 1
		for _, p := range rep.Problems() {
			if p.File != "fuzz.ini" || p.Line < 0 || p.Line > lines {
				t.Fatalf("problem located outside the input: %#v", p)
			}
		}
		seen := map[string]bool{}
		for _, name := range file.Sections() {
			if seen[name] || !file.Has(name) || file.Section(name).Name() != name || name == DefaultSection {
				t.Fatalf("section %q listed twice, or not found again", name)
			}
			seen[name] = true
			s := file.Section(name)
			keys := map[string]bool{}
			for _, k := range s.Keys() {
				if keys[k] || k == "" || k != normKey(k) {
					t.Fatalf("[%q] key %q is repeated, empty or not normalised", name, k)
				}
				keys[k] = true
				if _, ok := s.Lookup(k); !ok || s.Line(k) < 1 || s.Line(k) > lines {
					t.Fatalf("[%q] key %q cannot be read back (line %d)", name, k, s.Line(k))
				}
			}
			if len(s.Unused()) != 0 {
				t.Fatalf("[%q] keys read but still unused: %q", name, s.Unused())
			}
		}
		// What was parsed, written back and parsed again, is the same.
		again := Parse("again.ini", strings.NewReader(render(file)), nil)
		first, _ := json.Marshal(goSections(file))
		second, _ := json.Marshal(goSections(again))
		if !bytes.Equal(first, second) {
			t.Fatalf("round trip differs:\n%s\n%s", first, second)
		}
		if utf8.Valid(data) && again.Report().HasErrors() {
			t.Fatalf("rendered file has errors: %v", again.Report().Problems())
		}
		file.Expand(func(string) (string, bool) { return "$2y$${X}", true })
	})
}
