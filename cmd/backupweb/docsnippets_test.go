package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/backupweb/backupweb/internal/testkit/certtest"
)

// excerptMark starts the first line of an ini snippet of the docs that is
// deliberately a part of a configuration (a section to add to one made
// earlier on the page): it is checked on top of the configuration named
// after the mark, by the file keys it needs, rather than alone.
const excerptMark = "# excerpt"

// iniSnippet is one ```ini block of the documentation.
type iniSnippet struct {
	file string // README.md, docs/x.md
	line int    // of the opening fence
	text string
}

// iniSnippets returns every ini block of README.md and docs/*.md.
func iniSnippets(t *testing.T) []iniSnippet {
	t.Helper()
	root := filepath.Join("..", "..")
	files, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	files = append([]string{filepath.Join(root, "README.md")}, files...)
	var out []iniSnippet
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, f)
		var cur *iniSnippet
		for i, line := range strings.Split(string(b), "\n") {
			switch {
			case cur == nil && strings.TrimSpace(line) == "```ini":
				cur = &iniSnippet{file: rel, line: i + 1}
			case cur != nil && strings.HasPrefix(line, "```"):
				out = append(out, *cur)
				cur = nil
			case cur != nil:
				cur.text += line + "\n"
			}
		}
	}
	if len(out) < 20 {
		t.Fatalf("found only %d ini snippets: the extraction is broken", len(out))
	}
	return out
}

// snippetPath matches the absolute paths a snippet names.
var snippetPath = regexp.MustCompile(`(?m)^(\s*(?:users_file|groups_file|state_dir|dir|login_template|tls_ca|ca_file|tls_cert|tls_key|acme_ca_root|icon|factors_file|tokens_file)\s*[=:]\s*)(/\S+)\s*$`)

// snippetEnv matches the ${NAME} references of a snippet.
var snippetEnv = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// TestDocSnippetsPassCheckConfig passes every ini snippet of the README
// and docs/ through check-config as pasted: the files it names are made
// under a temporary folder (a user file with one user, a groups file, the
// folders), and its ${NAME} variables are set (a bcrypt hash for a *_HASH,
// a value otherwise). A snippet must not draw an error; only the warnings
// of an example (no backups folder yet, a weak test hash, authentication
// off on loopback) are allowed. An excerpt (first line "# excerpt of
// FILE:LINE") is checked on top of the snippet it names.
func TestDocSnippetsPassCheckConfig(t *testing.T) {
	snippets := iniSnippets(t)
	byPlace := map[string]string{}
	for _, s := range snippets {
		byPlace[fmt.Sprintf("%s:%d", s.file, s.line)] = s.text
	}
	for _, s := range snippets {
		t.Run(fmt.Sprintf("%s:%d", s.file, s.line), func(t *testing.T) {
			text := s.text
			if first, _, _ := strings.Cut(text, "\n"); strings.HasPrefix(first, excerptMark) {
				base, ok := byPlace[strings.TrimSpace(strings.TrimPrefix(first, excerptMark+" of"))]
				if !ok {
					t.Fatalf("%q names no snippet (write %s of FILE:LINE, the line of the snippet's opening fence)", first, excerptMark)
				}
				text = base + "\n" + text
			}
			root := t.TempDir()
			t.Chdir(root)
			pair := certtest.NewCA(t).Valid(t, "backups.example.lan", "192.168.1.20")
			text = snippetPath.ReplaceAllStringFunc(text, func(m string) string {
				sub := snippetPath.FindStringSubmatch(m)
				key, path := strings.TrimSpace(strings.TrimRight(sub[1], "=: \t")), sub[2]
				local := filepath.Join(root, path)
				os.MkdirAll(filepath.Dir(local), 0o755)
				switch key {
				case "users_file":
					os.WriteFile(local, []byte("alice:"+testHashA+"\nbob:"+testHashB+"\n"), 0o600)
				case "groups_file":
					os.WriteFile(local, []byte("admins: alice\noperators: bob\nmedia: alice\n"), 0o600)
				case "dir":
					os.MkdirAll(local, 0o755)
				case "ca_file", "acme_ca_root":
					os.WriteFile(local, certtest.NewCA(t).PEM, 0o644)
				case "tls_cert":
					os.WriteFile(local, pair.CertPEM, 0o644)
				case "tls_key":
					os.WriteFile(local, pair.KeyPEM, 0o600)
				}
				return sub[1] + local
			})
			env := map[string]string{"BACKUP_SECRET_KEY": strings.Repeat("ab", 32)}
			for _, m := range snippetEnv.FindAllStringSubmatch(text, -1) {
				env[m[1]] = "a-value-for-" + strings.ToLower(m[1])
				if strings.HasSuffix(m[1], "_HASH") {
					env[m[1]] = testHashA
				}
			}
			path := filepath.Join(root, "backupweb.ini")
			os.WriteFile(path, []byte(text), 0o600)
			c, _, stderr := testCLI(context.Background(), "", env)
			code := c.main([]string{"check-config", "-config", path})
			if code != exitOK || strings.Contains(stderr.String(), "error:") {
				t.Errorf("check-config refuses the snippet as pasted: exit %d\n%s\n%s", code, stderr, text)
			}
		})
	}
}
