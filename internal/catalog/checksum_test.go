package catalog

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestChecksums(t *testing.T) {
	const (
		sumA = "0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a"
		sumB = "0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b"
		sumC = "0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c"
	)
	dir := t.TempDir()
	for _, n := range []string{"a.tar", "b.tar", "c d.tar", "e.tar", "f.tar"} {
		put(t, dir, "db/"+n, 1, base)
	}
	put(t, dir, "db/a.tar", 1, base)
	writeFile(t, dir+"/db", "a.tar.sha256", strings.ToUpper(sumA)+"\n", base)
	writeFile(t, dir+"/db", "b.tar.sha256", sumB+"  b.tar\n", base)
	writeFile(t, dir+"/db", "SHA256SUMS", strings.Join([]string{
		sumC + "  a.tar", // the .sha256 file wins
		sumC + " *./c d.tar",
		"not a line",
		sumC + "  ../e.tar",
		sumC[:60] + "  f.tar",
	}, "\n")+"\n", base)
	writeFile(t, dir+"/db", "e.tar.sha256", sumB+"  other.tar\n", base)
	c := New(dir)
	defer c.Close()
	top, err := c.Tree()
	if err != nil {
		t.Fatal(err)
	}
	db, _ := top.Lookup("db/")
	got := map[string]string{}
	for _, b := range db.Backups {
		got[b.Name] = b.SHA256
	}
	want := map[string]string{"a.tar": sumA, "b.tar": sumB, "c d.tar": sumC, "e.tar": "", "f.tar": ""}
	if len(got) != len(want) {
		t.Fatalf("listed %v: the checksum files must not be backups", got)
	}
	for n, s := range want {
		if got[n] != s {
			t.Errorf("%s: sha256 %q, want %q", n, got[n], s)
		}
	}
	f, b, err := c.Open("db/a.tar")
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if b.SHA256 != sumA {
		t.Errorf("Open gives sha256 %q", b.SHA256)
	}
	for _, p := range []string{"db/SHA256SUMS", "db/a.tar.sha256"} {
		if _, _, err := c.Open(p); err != ErrNotFound {
			t.Errorf("Open(%s) = %v, want ErrNotFound", p, err)
		}
	}
}

// TestChecksumStale: a checksum file older than its backup gives the
// digest marked stale, in the tree and on Open; one not older, current.
func TestChecksumStale(t *testing.T) {
	const sum = "0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a"
	dir := t.TempDir()
	cases := []struct {
		name      string
		sumAt     time.Time
		wantStale bool
	}{
		{"same.tar", base, false},
		{"newer.tar", base.Add(time.Nanosecond), false},
		{"older.tar", base.Add(-time.Nanosecond), true},
		{"much-older.tar", base.Add(-time.Hour), true},
	}
	for _, tt := range cases {
		put(t, dir, tt.name, 1, base)
		writeFile(t, dir, tt.name+".sha256", sum+"\n", tt.sumAt)
	}
	c := New(dir)
	defer c.Close()
	top, err := c.Tree()
	if err != nil {
		t.Fatal(err)
	}
	inTree := map[string]Backup{}
	for _, b := range top.Backups {
		inTree[b.Name] = b
	}
	for _, tt := range cases {
		if b := inTree[tt.name]; b.SHA256 != sum || b.SumStale != tt.wantStale {
			t.Errorf("%s in the tree: %q stale %t, want stale %t", tt.name, b.SHA256, b.SumStale, tt.wantStale)
		}
		f, b, err := c.Open(tt.name)
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
		if b.SHA256 != sum || b.SumStale != tt.wantStale {
			t.Errorf("%s on Open: %q stale %t, want stale %t", tt.name, b.SHA256, b.SumStale, tt.wantStale)
		}
	}
}

// TestVersionFollowsRewrites: a rewrite in place with the same size and
// the modification time set back still changes the Version.
func TestVersionFollowsRewrites(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "a.tar", "aaaa", base)
	c := New(dir)
	defer c.Close()
	version := func() string {
		f, b, err := c.Open("a.tar")
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
		return b.Version()
	}
	v1 := version()
	if v1 != version() {
		t.Fatal("the Version of an unchanged file changed")
	}
	if err := os.WriteFile(filepath.Join(dir, "a.tar"), []byte("bbbb"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(filepath.Join(dir, "a.tar"), base, base); err != nil {
		t.Fatal(err)
	}
	if v2 := version(); v2 == v1 {
		t.Errorf("Version %q kept after a rewrite", v2)
	}
}
