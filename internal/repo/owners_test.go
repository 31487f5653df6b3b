package repo

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// ownerRow is a row of docs/operations.md's table of the package's owners
// and modes: | `path` | `owner:group` | mode | what |.
var ownerRow = regexp.MustCompile("(?m)^\\| `(/[^`]+)` \\| `([a-z]+:[a-z]+)` \\| ([0-7]{4}) \\|")

// packagedPath matches a path of the package's layout where a line names
// it: not a prefix of a longer path.
var packagedPath = regexp.MustCompile(`/(?:etc|var)/[A-Za-z0-9_./-]*[A-Za-z0-9_-]`)

// modeWord and ownerWord match a file mode and an owner:group in text.
var (
	modeWord  = regexp.MustCompile(`(?:^|[\s(,` + "`" + `])(0?[0-7]{3,4})(?:$|[\s),.:;` + "`" + `])`)
	ownerWord = regexp.MustCompile(`\b((?:root|backupweb):backupweb)\b`)
)

// TestPackagedOwnersAndModesAgree: each packaged file and folder has one
// owner and mode, the same everywhere. docs/operations.md's table is the
// reference; postinst's own table (its header) must say the same, and
// every line of the README, docs/, the packaged configuration and
// postinst's header that names one of those paths with a mode or an owner
// must give one of the modes and owners of the paths it names.
func TestPackagedOwnersAndModesAgree(t *testing.T) {
	root := filepath.Join("..", "..")
	read := func(rel string) string {
		b, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	type entry struct{ owner, mode string }
	table := map[string]entry{}
	for _, m := range ownerRow.FindAllStringSubmatch(read("docs/operations.md"), -1) {
		table[m[1]] = entry{m[2], m[3]}
	}
	if len(table) < 5 {
		t.Fatalf("docs/operations.md's table of owners and modes has %d rows: the pattern is broken", len(table))
	}
	norm := func(mode string) string {
		n, _ := strconv.ParseUint(mode, 8, 32)
		return strconv.FormatUint(n, 8)
	}
	header := regexp.MustCompile(`(?m)^#   (/\S+)\s+(\S+:\S+)\s+([0-7]{4})`)
	post := read("packaging/debian/postinst")
	rows := header.FindAllStringSubmatch(post, -1)
	if len(rows) < 4 {
		t.Fatalf("postinst's header lists %d paths: the pattern is broken", len(rows))
	}
	for _, m := range rows {
		if want, ok := table[m[1]]; !ok || want.owner != m[2] || want.mode != m[3] {
			t.Errorf("postinst lists %s as %s %s; docs/operations.md as %s %s", m[1], m[2], m[3], want.owner, want.mode)
		}
	}

	files, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	for i, f := range files {
		files[i], _ = filepath.Rel(root, f)
	}
	files = append(files, "README.md", "packaging/backupweb.ini", "Dockerfile")
	for _, f := range files {
		for i, line := range strings.Split(read(f), "\n") {
			var modes, owners []string
			for _, p := range packagedPath.FindAllString(line, -1) {
				if e, ok := table[p]; ok {
					modes, owners = append(modes, norm(e.mode)), append(owners, e.owner)
				}
			}
			if modes == nil {
				continue
			}
			for _, m := range modeWord.FindAllStringSubmatch(line, -1) {
				if !slices.Contains(modes, norm(m[1])) {
					t.Errorf("%s:%d gives mode %s to %v; docs/operations.md says %v:\n%s", f, i+1, m[1], packagedPath.FindAllString(line, -1), modes, line)
				}
			}
			for _, m := range ownerWord.FindAllStringSubmatch(line, -1) {
				if !slices.Contains(owners, m[1]) {
					t.Errorf("%s:%d gives owner %s to %v; docs/operations.md says %v:\n%s", f, i+1, m[1], packagedPath.FindAllString(line, -1), owners, line)
				}
			}
		}
	}
}
