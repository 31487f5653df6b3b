package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/testkit/toolstest"
)

// TestTokensDocScript runs docs/tokens.md as it stands: the token its
// "Make a token" command makes (read-only, limited to /backups/db/), and
// its script, with sh, curl, jq and sha256sum, against a served backups
// folder. The script downloads the newest backup of db/, not a newer one
// elsewhere nor an older one, and checks it against the catalog's
// checksum: once the copy no longer matches, the script fails.
func TestTokensDocScript(t *testing.T) {
	sh := toolstest.Need(t, "sh", "dash")
	toolstest.Need(t, "curl", "curl")
	toolstest.Need(t, "jq", "jq")
	toolstest.Need(t, "sha256sum", "coreutils")
	dir := tokenSetup(t)
	backups := filepath.Join(dir, "backups")
	old := time.Now().Add(-48 * time.Hour)
	files := []struct {
		name, content string
		age           time.Duration
	}{
		{"db/older.sql", "yesterday's dump", 24 * time.Hour},
		{"db/newest.sql", "last night's dump", time.Hour},
		{"db/daily/nested.sql", "a subfolder's dump", 0},
		{"web.tar", "newer, but in another folder", 0},
	}
	for _, f := range files {
		p := filepath.Join(backups, filepath.FromSlash(f.name))
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, []byte(f.content), 0o600))
		at := time.Now().Add(-f.age)
		must(t, os.Chtimes(p, at, at))
	}
	sum := sha256.Sum256([]byte("last night's dump"))
	must(t, os.WriteFile(filepath.Join(backups, "db", "newest.sql.sha256"), []byte(hex.EncodeToString(sum[:])+"\n"), 0o600))
	must(t, os.Chtimes(filepath.Join(backups, "db", "newest.sql.sha256"), old, old))

	// The token, made by the documented command.
	cmdLine := docSnippet(t, "docs/tokens.md", "## Make a token", "sh")
	cmdLine = strings.ReplaceAll(strings.SplitN(cmdLine, "\n#", 2)[0], "\\\n", " ")
	if !strings.Contains(cmdLine, "/etc/backupweb/users") {
		t.Fatalf("the documented command changed: %s", cmdLine)
	}
	cmdLine = strings.Replace(cmdLine, "/etc/backupweb/users", filepath.Join(dir, "users"), 1)
	// The shell splits the command's words; the program runs them.
	words, err := exec.Command(sh, "-c", `f() { shift 2; printf '%s\0' "$@"; }; f `+cmdLine).Output()
	if err != nil {
		t.Fatal(err)
	}
	args := strings.Split(strings.TrimSuffix(string(words), "\x00"), "\x00")
	code, token, stderr := runTokenCmd(args...)
	if code != exitOK {
		t.Fatalf("%s: %d %s", cmdLine, code, stderr)
	}
	tokenFile := filepath.Join(dir, "token")
	must(t, os.WriteFile(tokenFile, []byte(strings.TrimSpace(token)+"\n"), 0o600))

	addr, log := serveInProcess(t, dir, loginINI(dir, ""), nil)
	script := docSnippet(t, "docs/tokens.md", "Download the newest backup of a folder", "sh")
	for _, s := range []string{"https://backups.example.com", "/etc/fetch-backup/token"} {
		if !strings.Contains(script, s) {
			t.Fatalf("the documented script no longer holds %s:\n%s", s, script)
		}
	}
	script = strings.ReplaceAll(script, "https://backups.example.com", "http://"+addr)
	script = strings.ReplaceAll(script, "/etc/fetch-backup/token", tokenFile)
	run := func() (string, error) {
		work := t.TempDir()
		cmd := exec.Command(sh, "-c", script)
		cmd.Dir = work
		out, err := cmd.CombinedOutput()
		got, _ := os.ReadFile(filepath.Join(work, "newest.sql"))
		entries, _ := os.ReadDir(work)
		if len(entries) != 1 || entries[0].Name() != "newest.sql" {
			t.Errorf("the script left %v, want newest.sql alone", entries)
		}
		if err != nil {
			return string(got), fmt.Errorf("%w:\n%s", err, out)
		}
		return string(got), nil
	}
	if got, err := run(); err != nil || got != "last night's dump" {
		t.Fatalf("the script: %v; downloaded %q", err, got)
	}
	// The copy no longer matches the checksum the catalog gives: the
	// script must fail rather than keep it.
	p := filepath.Join(backups, "db", "newest.sql")
	must(t, os.WriteFile(p, []byte("last night's dump, damaged"), 0o600))
	at := time.Now().Add(-time.Hour)
	must(t, os.Chtimes(p, at, at))
	if got, err := run(); err == nil {
		t.Fatalf("the script accepted a copy that does not match its checksum (%q)", got)
	}
	if strings.Contains(log.String(), strings.TrimSpace(token)) {
		t.Fatal("the token reached the log")
	}
}

// must fails t on err.
func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
