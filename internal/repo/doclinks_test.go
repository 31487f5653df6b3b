package repo

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// link matches a Markdown link's target: [text](target).
var link = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// slug is GitHub's anchor for a heading: lower case, punctuation but
// hyphens dropped, spaces to hyphens.
func slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r > 127:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// anchors returns the anchors of a Markdown file's headings, outside code
// blocks.
func anchors(text string) map[string]bool {
	out := map[string]bool{}
	fence := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "```") {
			fence = !fence
			continue
		}
		if fence || !strings.HasPrefix(line, "#") {
			continue
		}
		h := strings.TrimLeft(line, "#")
		if strings.HasPrefix(h, " ") {
			out[slug(h)] = true
		}
	}
	return out
}

// problems lists the broken links of the Markdown file path.
func problems(t *testing.T, root, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	var out []string
	rel, _ := filepath.Rel(root, path)
	for _, m := range link.FindAllStringSubmatch(text, -1) {
		target := m[1]
		if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
			continue
		}
		file, frag, _ := strings.Cut(target, "#")
		dest := path
		if file != "" {
			dest = filepath.Join(filepath.Dir(path), filepath.FromSlash(file))
		}
		fi, err := os.Stat(dest)
		if err != nil {
			out = append(out, rel+": link "+target+": no such file")
			continue
		}
		if frag == "" {
			continue
		}
		if fi.IsDir() {
			out = append(out, rel+": link "+target+": a folder has no headings")
			continue
		}
		db, err := os.ReadFile(dest)
		if err != nil {
			t.Fatal(err)
		}
		if !anchors(string(db))[frag] {
			out = append(out, rel+": link "+target+": no such heading")
		}
	}
	return out
}

// TestLinks checks every relative link of the documentation.
func TestLinks(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	files := []string{filepath.Join(root, "README.md"), filepath.Join(root, "ARCHITECTURE.md")}
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) == 0 {
		t.Fatal("no docs/*.md found")
	}
	for _, f := range append(files, docs...) {
		for _, p := range problems(t, root, f) {
			t.Error(p)
		}
	}
}

// TestReadmeIsShort keeps the README a front page: what it is, the two
// commands, install, choosing a type and a map of the documentation.
func TestReadmeIsShort(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "\n"); n > 250 {
		t.Errorf("README.md has %d lines; keep it under 250 and move the rest to docs/", n)
	}
	for _, want := range []string{"go run ./cmd/backupweb serve", "go test ./..."} {
		if !strings.Contains(string(b), want) {
			t.Errorf("README.md lost the command %q", want)
		}
	}
}

// TestProblemsFindsBrokenLinks runs the check on files written for the
// test.
func TestProblemsFindsBrokenLinks(t *testing.T) {
	root := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(root, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("b.md", "# Title\n\n## Some heading, here\n```\n# not a heading\n```\n")
	a := write("a.md", "[ok](b.md) [ok](b.md#some-heading-here) [ok](#local)\n# Local\n"+
		"[bad](c.md) [bad](b.md#not-a-heading) [bad](#nowhere) [web](https://example.com/x#y)\n")
	got := problems(t, root, a)
	want := []string{
		"a.md: link c.md: no such file",
		"a.md: link b.md#not-a-heading: no such heading",
		"a.md: link #nowhere: no such heading",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("problems:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// inlineComment matches a key line of an INI snippet whose value holds
// " #" or " ;": configparser, and so backupweb, keeps that as part of
// the value, so a pasted snippet would be refused or, worse, accepted
// with a different value.
var inlineComment = regexp.MustCompile(`^\s*[A-Za-z0-9_.]+\s*[=:].*\s[#;]`)

// TestSnippetsHaveNoInlineComments reads every ini block of the README,
// ARCHITECTURE.md and docs/, and every shipped .ini file.
func TestSnippetsHaveNoInlineComments(t *testing.T) {
	root := filepath.Join("..", "..")
	var files []string
	for _, g := range []string{"*.md", "docs/*.md", "examples/*.ini", "packaging/*.ini"} {
		m, err := filepath.Glob(filepath.Join(root, g))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	if len(files) < 10 {
		t.Fatalf("found only %d files: the globs are broken", len(files))
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		inIni := strings.HasSuffix(f, ".ini")
		for i, line := range strings.Split(string(b), "\n") {
			if !strings.HasSuffix(f, ".ini") && strings.HasPrefix(line, "```") {
				inIni = strings.TrimSpace(strings.TrimPrefix(line, "```")) == "ini"
				continue
			}
			if inIni && inlineComment.MatchString(line) {
				t.Errorf("%s:%d: %q: an inline comment becomes part of the value; put it on a line of its own", f, i+1, line)
			}
		}
	}
}
