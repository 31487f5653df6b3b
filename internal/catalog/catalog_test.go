package catalog

import (
	"errors"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/testkit"
)

var base = time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)

// writeFile creates dir/name with content and the given modification time.
func writeFile(t testing.TB, dir, name, content string, mod time.Time) {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, mod, mod); err != nil {
		t.Fatal(err)
	}
}

// symlink creates a link, skipping the test where the system cannot.
func symlink(t testing.TB, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Skipf("cannot create symbolic links here: %v", err)
	}
}

// fixture builds a backups folder holding every kind of entry the catalog
// must tell apart, and returns it with a file outside it.
func fixture(t testing.TB) (dir, outside string) {
	t.Helper()
	top := t.TempDir()
	dir = filepath.Join(top, "backups")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	outside = filepath.Join(top, "secret.txt")
	writeFile(t, top, "secret.txt", "secret", base)

	writeFile(t, dir, "old.tar.gz", "old", base)
	writeFile(t, dir, "new.tar.gz", "newest!", base.Add(2*time.Hour))
	writeFile(t, dir, "b-same.tar", "bb", base.Add(time.Hour))
	writeFile(t, dir, "a-same.tar", "aa", base.Add(time.Hour))
	writeFile(t, dir, "ünïcode \"quoted\".tar", "u", base.Add(-time.Hour))
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "sub"), "inner.tar", "inner", base.Add(3*time.Hour))
	symlink(t, outside, filepath.Join(dir, "link-out"))
	symlink(t, "old.tar.gz", filepath.Join(dir, "link-in"))
	symlink(t, "sub", filepath.Join(dir, "link-dir"))
	return dir, outside
}

func TestListNewestFirstRegularFilesOnly(t *testing.T) {
	dir, _ := fixture(t)
	got, err := New(dir).List()
	if err != nil {
		t.Fatal(err)
	}
	want := []Backup{
		{Name: "new.tar.gz", Size: 7, Modified: base.Add(2 * time.Hour)},
		{Name: "a-same.tar", Size: 2, Modified: base.Add(time.Hour)},
		{Name: "b-same.tar", Size: 2, Modified: base.Add(time.Hour)},
		{Name: "old.tar.gz", Size: 3, Modified: base},
		{Name: "ünïcode \"quoted\".tar", Size: 1, Modified: base.Add(-time.Hour)},
	}
	if !slices.EqualFunc(got, want, func(a, b Backup) bool {
		return a.Name == b.Name && a.Size == b.Size && a.Modified.Equal(b.Modified)
	}) {
		t.Fatalf("List() =\n%v\nwant\n%v", got, want)
	}
}

func TestListMissingFolderIsEmpty(t *testing.T) {
	c := New(filepath.Join(t.TempDir(), "not-yet"))
	got, err := c.List()
	if err != nil {
		t.Fatalf("List() error = %v, want none", err)
	}
	if got == nil || len(got) != 0 {
		t.Fatalf("List() = %#v, want an empty, non-nil slice", got)
	}
}

func TestListFolderIsAFile(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "file", "x", base)
	_, err := New(filepath.Join(dir, "file")).List()
	if err == nil {
		t.Fatal("List() of a file: no error")
	}
}

func TestDir(t *testing.T) {
	if got := New("./backups").Dir(); got != "./backups" {
		t.Fatalf("Dir() = %q", got)
	}
}

func TestOpen(t *testing.T) {
	dir, outside := fixture(t)
	c := New(dir)
	tests := []struct {
		name    string
		content string // empty: ErrNotFound expected
	}{
		{"old.tar.gz", "old"},
		{"new.tar.gz", "newest!"},
		{"ünïcode \"quoted\".tar", "u"},
		{"", ""},
		{".", ""},
		{"..", ""},
		{"../secret.txt", ""},
		{"..\\secret.txt", ""},
		{"sub/inner.tar", "inner"},
		{"sub\\inner.tar", ""},
		{"sub//inner.tar", ""},
		{"sub/./inner.tar", ""},
		{"sub/../old.tar.gz", ""},
		{"link-dir/inner.tar", ""},
		{"sub/", ""},
		{"/sub/inner.tar", ""},
		{"./old.tar.gz", ""},
		{"old.tar.gz/", ""},
		{"old.tar.gz\x00", ""},
		{outside, ""},
		{"/etc/passwd", ""},
		{"sub", ""},
		{"link-out", ""},
		{"link-in", ""},
		{"link-dir", ""},
		{"missing", ""},
		{"%2e%2e", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, b, err := c.Open(tt.name)
			if tt.content == "" {
				if !errors.Is(err, ErrNotFound) {
					if f != nil {
						f.Close()
					}
					t.Fatalf("Open(%q) error = %v, want ErrNotFound", tt.name, err)
				}
				if f != nil {
					t.Fatal("file returned along with an error")
				}
				return
			}
			if err != nil {
				t.Fatalf("Open(%q): %v", tt.name, err)
			}
			defer f.Close()
			data, err := io.ReadAll(f)
			if err != nil {
				t.Fatal(err)
			}
			if string(data) != tt.content {
				t.Errorf("content = %q, want %q", data, tt.content)
			}
			if b.Name != path.Base(tt.name) || b.Size != int64(len(tt.content)) || b.Modified.IsZero() {
				t.Errorf("Backup = %+v", b)
			}
		})
	}
}

func TestOpenMissingFolder(t *testing.T) {
	_, _, err := New(filepath.Join(t.TempDir(), "nope")).Open("x.tar")
	if !errors.Is(err, ErrNotFound) {
		t.Fatalf("error = %v, want ErrNotFound", err)
	}
}

// TestOpenThroughLinkedFolder checks that the folder itself may be a link
// (an operator pointing ./backups at a mounted disk); only entries inside
// it must not be.
func TestOpenThroughLinkedFolder(t *testing.T) {
	dir, _ := fixture(t)
	link := filepath.Join(t.TempDir(), "backups-link")
	symlink(t, dir, link)
	c := New(link)
	f, _, err := c.Open("old.tar.gz")
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	list, err := c.List()
	if err != nil || len(list) != 5 {
		t.Fatalf("List() = %d backups, %v", len(list), err)
	}
}

func FuzzOpen(f *testing.F) {
	for _, s := range []string{"old.tar.gz", "..", "../x", "a/b", "a\\b", "link-in", "sub", "", "\x00", "%2f", "sub/inner.tar", "link-dir/inner.tar"} {
		f.Add(s)
	}
	dir, _ := fixture(f)
	c := New(dir)
	allowed := map[string]bool{}
	top, err := c.Tree()
	if err != nil {
		f.Fatal(err)
	}
	top.Walk(func(d *Folder) {
		for _, b := range d.Backups {
			allowed[d.Path+b.Name] = true
		}
	})
	f.Fuzz(func(t *testing.T, name string) {
		file, b, err := c.Open(name)
		if err != nil {
			if !errors.Is(err, ErrNotFound) {
				t.Fatalf("Open(%q) error = %v, want ErrNotFound or success", name, err)
			}
			return
		}
		file.Close()
		if !allowed[name] || b.Name != path.Base(name) {
			t.Fatalf("Open(%q) opened %q, which List does not offer", name, b.Name)
		}
	})
}

// TestSnapshotShared: the same *Snapshot while the folder is unchanged, a
// new one once a backup is added.
func TestSnapshotShared(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.tar.gz"), []byte("a"), 0o600)
	c := New(dir)
	s1, err := c.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	if s2, _ := c.Snapshot(); s2 != s1 {
		t.Fatal("unchanged folder, new snapshot")
	}
	os.WriteFile(filepath.Join(dir, "b.tar.gz"), []byte("b"), 0o600)
	later := time.Now().Add(time.Minute)
	os.Chtimes(dir, later, later)
	var s3 *Snapshot
	testkit.WaitUntil(t, 5*time.Second, func() bool { s3, _ = c.Snapshot(); return s3 != s1 },
		func() string { return "the snapshot is still the old one" })
	if s3 == s1 || len(s3.Backups) != 2 || len(s1.Backups) != 1 {
		t.Fatalf("after adding a backup: %+v (before %+v)", s3.Backups, s1.Backups)
	}
}
