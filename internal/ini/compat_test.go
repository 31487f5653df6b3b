package ini

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/backupweb/backupweb/internal/testkit/toolstest"
)

// pythonReader reads a JSON list of documents (as lists of byte values) on
// standard input and prints, for each, what configparser makes of it the
// way the Flask-era service read its file: universal newlines, UTF-8 with an
// optional BOM, ConfigParser(interpolation=None, strict=True).
const pythonReader = `
import configparser, io, json, sys
out = []
for raw in json.load(sys.stdin):
    try:
        text = bytes(raw).decode("utf-8-sig")
        c = configparser.ConfigParser(interpolation=None, strict=True)
        c.read_file(io.StringIO(text, newline=None))
        secs = [["DEFAULT", [[k, v] for k, v in c.defaults().items()]]]
        for s in c.sections():
            secs.append([s, [[k, v] for k, v in c._sections[s].items()]])
        out.append({"ok": True, "sections": secs})
    except (configparser.Error, UnicodeDecodeError) as e:
        out.append({"ok": False, "sections": None})
json.dump(out, sys.stdout)
`

// goSections renders f the way pythonReader does: DEFAULT first (own keys),
// then every section with its own keys only.
func goSections(f *File) []any {
	pairs := func(s *Section) []any {
		out := []any{}
		if s == nil {
			return out
		}
		for _, k := range s.keys {
			out = append(out, []any{k, s.entries[k].value})
		}
		return out
	}
	secs := []any{[]any{DefaultSection, pairs(f.defaults)}}
	for _, s := range f.sections {
		secs = append(secs, []any{s.name, pairs(s)})
	}
	return secs
}

// TestCompatWithConfigparser parses every test document with Python's
// configparser and checks that Parse agrees: same sections, keys and values
// when Python accepts the document, at least one error when it refuses it.
func TestCompatWithConfigparser(t *testing.T) {
	python := toolstest.Need(t, "python3", "python3")
	var docs [][]byte
	for _, c := range parseCases {
		docs = append(docs, []byte(c.in))
	}
	seeds, _ := filepath.Glob(filepath.Join("testdata", "fuzz", "FuzzParse", "*"))
	for _, name := range seeds {
		docs = append(docs, readCorpusFile(t, name))
	}
	input := make([][]int, len(docs))
	for i, d := range docs {
		input[i] = make([]int, len(d))
		for j, b := range d {
			input[i][j] = int(b)
		}
	}
	in, _ := json.Marshal(input)
	cmd := exec.Command(python, "-c", pythonReader)
	cmd.Stdin = bytes.NewReader(in)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python3: %v", err)
	}
	var results []struct {
		OK       bool  `json:"ok"`
		Sections []any `json:"sections"`
	}
	if err := json.Unmarshal(out, &results); err != nil || len(results) != len(docs) {
		t.Fatalf("python3 output: %v (%d results for %d documents)", err, len(results), len(docs))
	}
	for i, doc := range docs {
		rep := &Report{}
		f := Parse("t", bytes.NewReader(doc), rep)
		py := results[i]
		switch {
		case !py.OK && !rep.HasErrors():
			t.Errorf("document %q: configparser refuses it, Parse reports no error", doc)
		case py.OK && rep.HasErrors():
			t.Errorf("document %q: configparser accepts it, Parse reports %v", doc, rep.Problems())
		case py.OK:
			var got []any
			b, _ := json.Marshal(goSections(f))
			_ = json.Unmarshal(b, &got)
			if !reflect.DeepEqual(got, py.Sections) {
				t.Errorf("document %q:\nParse        %s\nconfigparser %s", doc, b, mustJSON(py.Sections))
			}
		}
	}
}

// mustJSON renders v for a failure message.
func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// readCorpusFile decodes a one-value "go test fuzz v1" file holding []byte.
func readCorpusFile(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	header, body, ok := strings.Cut(string(data), "\n")
	if !ok || header != "go test fuzz v1" {
		t.Fatalf("%s: not a fuzz corpus file", name)
	}
	lit, okPrefix := strings.CutPrefix(strings.TrimSpace(body), "[]byte(")
	lit, okSuffix := strings.CutSuffix(lit, ")")
	if !okPrefix || !okSuffix {
		t.Fatalf("%s: want one []byte(\"...\") value", name)
	}
	doc, err := strconv.Unquote(lit)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return []byte(doc)
}
