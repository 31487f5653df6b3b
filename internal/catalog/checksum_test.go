package catalog

import (
	"strings"
	"testing"
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
