package web

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/backupweb/backupweb/internal/testkit/toolstest"
)

// untar extracts a tar stream with GNU tar into a new folder and returns
// every regular file in it by path, with the SHA-256 of its content, and
// every entry that is neither a file nor a folder.
func untar(t *testing.T, body io.Reader) (files map[string]string, other []string) {
	t.Helper()
	tarPath := toolstest.Need(t, "tar", "tar")
	out := t.TempDir()
	cmd := exec.Command(tarPath, "-x", "-f", "-", "-C", out)
	cmd.Stdin = body
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("tar -x: %v\n%s", err, msg)
	}
	files = map[string]string{}
	must(t, filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == out {
			return err
		}
		rel, _ := filepath.Rel(out, p)
		switch {
		case d.Type().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(b)
			files[filepath.ToSlash(rel)] = hex.EncodeToString(sum[:])
		case !d.IsDir():
			other = append(other, rel)
		}
		return nil
	}))
	return files, other
}

// sumsBelow returns the SHA-256 of each file the catalog serves below
// folder of dir, by path relative to it, as the archive should hold them.
func sumsBelow(t *testing.T, dir string, paths ...string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, p := range paths {
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(p)))
		must(t, err)
		sum := sha256.Sum256(b)
		out[p] = hex.EncodeToString(sum[:])
	}
	return out
}

// TestFolderArchive: ?archive=tar streams what the user may open below
// the folder, and GNU tar extracts exactly those files, byte for byte:
// no dot file, no link, no checksum file, nothing the rules hide.
func TestFolderArchive(t *testing.T) {
	dir, _ := treeFixture(t)
	srv := treeServer(t, dir, Options{})
	all := []string{"db/pg-1.sql.zst", "db/pg-2.sql.zst", "web/site.tar.zst", "hosts/alpha/daily/a.tar", "top.tar"}
	for _, n := range oddNames {
		all = append(all, "odd dir %#?/"+n)
	}
	for _, tc := range []struct {
		target, filename string
		files            []string
		base             string
	}{
		{"/backups/?archive=tar", "backups.tar", all, ""},
		{"/?archive=tar", "backups.tar", all, ""},
		{"/backups/db/?archive=tar", "db.tar", []string{"pg-1.sql.zst", "pg-2.sql.zst"}, "db/"},
		{"/backups/hosts/?archive=tar", "hosts.tar", []string{"alpha/daily/a.tar"}, "hosts/"},
		{"/backups/odd%20dir%20%25%23%3F/?archive=tar", "odd dir _#?.tar", oddNames, "odd dir %#?/"},
	} {
		t.Run(tc.target, func(t *testing.T) {
			res, err := http.Get(srv.URL + tc.target)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			if res.StatusCode != http.StatusOK {
				t.Fatalf("status %d", res.StatusCode)
			}
			if ct := res.Header.Get("Content-Type"); ct != "application/x-tar" {
				t.Errorf("Content-Type %q", ct)
			}
			if cd := res.Header.Get("Content-Disposition"); !strings.HasPrefix(cd, `attachment; filename="`+tc.filename+`"`) {
				t.Errorf("Content-Disposition %q, want the file name %q", cd, tc.filename)
			}
			got, other := untar(t, res.Body)
			var want []string
			for _, f := range tc.files {
				want = append(want, tc.base+f)
			}
			wantSums := sumsBelow(t, dir, want...)
			for p, sum := range wantSums {
				if got[strings.TrimPrefix(p, tc.base)] != sum {
					t.Errorf("%s: extracted %q, want sha256 %s", p, got[strings.TrimPrefix(p, tc.base)], sum)
				}
			}
			if len(got) != len(wantSums) || len(other) != 0 {
				t.Errorf("extracted %v and %v, want exactly %v", slices.Sorted(mapsKeys(got)), other, want)
			}
		})
	}
	for _, target := range []string{"/backups/db/?archive=zip", "/backups/db/?archive=", "/backups/db/?archive=tar&archive=tar"} {
		if res, _ := get(t, nil, srv.URL+target, nil); res.StatusCode != http.StatusBadRequest {
			t.Errorf("%s: %d, want 400", target, res.StatusCode)
		}
	}
	for _, target := range []string{"/backups/.git/?archive=tar", "/backups/out/?archive=tar", "/backups/nothing/?archive=tar"} {
		if res, body := get(t, nil, srv.URL+target, nil); res.StatusCode != http.StatusNotFound || strings.Contains(body, "HIDDEN") {
			t.Errorf("%s: %d, want 404", target, res.StatusCode)
		}
	}
	req, _ := http.NewRequest("HEAD", srv.URL+"/backups/db/?archive=tar", nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "application/x-tar" {
		t.Errorf("HEAD: %d %q", res.StatusCode, res.Header.Get("Content-Type"))
	}
}

func mapsKeys(m map[string]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// TestFolderArchiveScopesAndRules: a read-only token scoped to db/ gets
// db/ as a tar and is refused (403) the top folder and any other method;
// the access rules leave out of the archive what they hide from the user.
func TestFolderArchiveScopesAndRules(t *testing.T) {
	dir, _ := treeFixture(t)
	scoped := treeServer(t, dir, Options{Provider: scopedProvider{}})
	for _, tc := range []struct {
		target string
		header map[string]string
		status int
	}{
		{"/backups/db/?archive=tar", nil, http.StatusOK},
		{"/backups/?archive=tar", nil, http.StatusForbidden},
		{"/?archive=tar", nil, http.StatusForbidden},
		{"/backups/web/?archive=tar", nil, http.StatusForbidden},
		{"/backups/db/?archive=tar&_method=DELETE", nil, http.StatusForbidden},
		{"/backups/db/?archive=tar", map[string]string{"X-HTTP-Method-Override": "PUT"}, http.StatusForbidden},
	} {
		h := map[string]string{"X-Test-User": "carol"}
		for k, v := range tc.header {
			h[k] = v
		}
		res, body := get(t, nil, scoped.URL+tc.target, h)
		if res.StatusCode != tc.status {
			t.Errorf("scoped token, %s %v: %d, want %d", tc.target, tc.header, res.StatusCode, tc.status)
		}
		if tc.status != http.StatusOK && (strings.Contains(body, "SITE-CONTENT") || strings.Contains(body, "pg one")) {
			t.Errorf("%s: a refusal holds a backup's bytes", tc.target)
		}
	}
	req, _ := http.NewRequest("GET", scoped.URL+"/backups/db/?archive=tar", nil)
	req.Header.Set("X-Test-User", "carol")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := untar(t, res.Body)
	res.Body.Close()
	if len(got) != 2 || got["pg-1.sql.zst"] == "" || got["pg-2.sql.zst"] == "" {
		t.Errorf("the scoped archive holds %v", got)
	}

	for _, p := range []string{"ops/o.tar", "admin/a.tar", "ops/deep/d.tar"} {
		must(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o700))
		writeBackup(t, filepath.Dir(filepath.Join(dir, p)), filepath.Base(p), "RULED "+p, base)
	}
	gt := &groupTable{}
	gt.set(map[string][]string{"bob": {"ops"}}, false)
	ruled := treeServer(t, dir, Options{Provider: headerProvider{}, Rules: testRules(t), Groups: gt})
	for _, tc := range []struct {
		user    string
		in, out []string
	}{
		{"carol", []string{"db/pg-1.sql.zst", "top.tar"}, []string{"ops/o.tar", "ops/deep/d.tar", "admin/a.tar"}},
		{"bob", []string{"db/pg-1.sql.zst", "ops/o.tar", "ops/deep/d.tar"}, []string{"admin/a.tar"}},
	} {
		req, _ := http.NewRequest("GET", ruled.URL+"/backups/?archive=tar", nil)
		req.Header.Set("X-Test-User", tc.user)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := untar(t, res.Body)
		res.Body.Close()
		for _, p := range tc.in {
			if got[p] == "" {
				t.Errorf("%s: %s missing from the archive", tc.user, p)
			}
		}
		for _, p := range tc.out {
			if got[p] != "" {
				t.Errorf("%s: %s is in the archive, which the rules hide", tc.user, p)
			}
		}
	}
}
