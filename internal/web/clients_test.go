package web

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/testkit/toolstest"
)

// servedFiles are the backups of treeFixture a client of the folder pages
// must find, by path below the top folder.
func servedFiles() []string {
	all := []string{"db/pg-1.sql.zst", "db/pg-2.sql.zst", "web/site.tar.zst", "hosts/alpha/daily/a.tar", "top.tar"}
	for _, n := range oddNames {
		all = append(all, "odd dir %#?/"+n)
	}
	return all
}

// filesBelow returns every regular file under dir, by slash path, with
// the SHA-256 of its content.
func filesBelow(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	must(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		sum := sha256.Sum256(b)
		out[filepath.ToSlash(rel)] = hex.EncodeToString(sum[:])
		return nil
	}))
	return out
}

// runClient runs a client program to its end, within a minute, and
// returns its standard output; the test fails when it fails.
func runClient(t *testing.T, env []string, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), env...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s%s", filepath.Base(name), strings.Join(args, " "), err, out, stderr.String())
	}
	return string(out)
}

// TestRcloneReadsFolderPages: rclone's http backend lists the folder
// pages (every backup and folder, nothing hidden, no sort or archive link
// taken for a file) and copies every backup byte for byte.
func TestRcloneReadsFolderPages(t *testing.T) {
	rclone := toolstest.Need(t, "rclone", "rclone")
	dir, _ := treeFixture(t)
	srv := treeServer(t, dir, Options{})
	home := t.TempDir()
	env := []string{"HOME=" + home, "RCLONE_CONFIG=" + filepath.Join(home, "rclone.conf"), "XDG_CACHE_HOME=" + filepath.Join(home, "cache")}
	common := []string{"--http-url", srv.URL + "/backups/", "--retries", "1", "--low-level-retries", "1"}

	listed := strings.Split(strings.TrimSpace(runClient(t, env, rclone, append([]string{"lsf", "-R", "--files-only", ":http:"}, common...)...)), "\n")
	slices.Sort(listed)
	want := servedFiles()
	slices.Sort(want)
	if !slices.Equal(listed, want) {
		t.Errorf("rclone lists\n%q\nwant\n%q", listed, want)
	}

	out := t.TempDir()
	runClient(t, env, rclone, append([]string{"copy", ":http:", out}, common...)...)
	got := filesBelow(t, out)
	wantSums := sumsBelow(t, dir, want...)
	for p, sum := range wantSums {
		if got[p] != sum {
			t.Errorf("%s: copied with sha256 %q, want %s", p, got[p], sum)
		}
	}
	if len(got) != len(wantSums) {
		t.Errorf("rclone copied %d files, want %d: %v", len(got), len(wantSums), slices.Sorted(mapsKeys(got)))
	}
}

// TestWgetMirrorsFolderPages: wget --mirror below /backups/ fetches every
// backup byte for byte, and nothing hidden.
func TestWgetMirrorsFolderPages(t *testing.T) {
	wget := toolstest.Need(t, "wget", "wget")
	dir, _ := treeFixture(t)
	srv := treeServer(t, dir, Options{})
	out := t.TempDir()
	runClient(t, []string{"HOME=" + t.TempDir()}, wget, "--mirror", "--no-parent", "--no-host-directories", "--cut-dirs=1",
		"--reject-regex", `[?]`, "--tries=1", "--quiet", "--directory-prefix", out, srv.URL+"/backups/")
	got := filesBelow(t, out)
	want := servedFiles()
	wantSums := sumsBelow(t, dir, want...)
	for p, sum := range wantSums {
		if got[p] != sum {
			t.Errorf("%s: mirrored with sha256 %q, want %s", p, got[p], sum)
		}
	}
	for p := range got {
		if _, ok := wantSums[p]; ok {
			continue
		}
		if !strings.HasSuffix(p, "index.html") {
			t.Errorf("wget mirrored %s, neither a backup nor a folder's page", p)
		}
	}
	for p, sum := range got {
		if b, err := os.ReadFile(filepath.Join(out, filepath.FromSlash(p))); err == nil && (strings.Contains(string(b), "HIDDEN-CONTENT") || strings.Contains(string(b), "top secret")) {
			t.Errorf("%s (%s) holds what the catalog hides", p, sum)
		}
	}
}
