package catalog

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// tree makes dir/rel (a path with slashes) holding a one-byte-per-size
// file modified at mod.
func put(t testing.TB, dir, rel string, size int, mod time.Time) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Dir(p), filepath.Base(p), strings.Repeat("x", size), mod)
}

// names lists a page's entries: folders with a final slash, then backups.
func names(p Page) string {
	var out []string
	for _, f := range p.Folders {
		out = append(out, f.Name+"/")
	}
	for _, b := range p.Backups {
		out = append(out, b.Name)
	}
	return strings.Join(out, " ")
}

func TestPageOrders(t *testing.T) {
	dir := t.TempDir()
	put(t, dir, "b.tar", 1, base)
	put(t, dir, "A.tar", 3, base.Add(time.Hour))
	put(t, dir, "c.tar", 2, base.Add(-time.Hour))
	put(t, dir, "zdb/x.tar", 10, base.Add(-2*time.Hour))
	put(t, dir, "web/y.tar", 1, base.Add(2*time.Hour))
	put(t, dir, ".hidden/z.tar", 1, base)
	put(t, dir, ".dot.tar", 1, base)
	c := New(dir)
	defer c.Close()
	top, err := c.Tree()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		sort, order, q, want string
	}{
		{"", "", "", "web/ zdb/ A.tar b.tar c.tar"},
		{"modified", "asc", "", "zdb/ web/ c.tar b.tar A.tar"},
		{"name", "", "", "web/ zdb/ A.tar b.tar c.tar"},
		{"name", "desc", "", "zdb/ web/ c.tar b.tar A.tar"},
		{"size", "", "", "zdb/ web/ A.tar c.tar b.tar"},
		{"size", "asc", "", "web/ zdb/ b.tar c.tar A.tar"},
		{"", "", "a", "A.tar b.tar c.tar"},
		{"", "", "DB", "zdb/"},
		{"", "", "nothing", ""},
	}
	for _, tt := range tests {
		t.Run(tt.sort+tt.order+tt.q, func(t *testing.T) {
			s, desc, ok := ParseOrder(tt.sort, tt.order)
			if !ok {
				t.Fatal("order refused")
			}
			p, err := top.Page(Query{Q: tt.q, Sort: s, Desc: desc, Limit: 10})
			if err != nil {
				t.Fatal(err)
			}
			if got := names(p); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
	if top.Count != 5 || top.Size != 17 || !top.Newest.Equal(base.Add(2*time.Hour)) {
		t.Errorf("totals %d %d %v", top.Count, top.Size, top.Newest)
	}
	for _, bad := range [][2]string{{"date", ""}, {"name", "up"}} {
		if _, _, ok := ParseOrder(bad[0], bad[1]); ok {
			t.Errorf("ParseOrder(%q, %q) accepted", bad[0], bad[1])
		}
	}
	for _, q := range []Query{{Limit: 0}, {Limit: MaxLimit + 1}, {Limit: 5, Cursor: "!!"}, {Limit: 5, Cursor: "eA"}} {
		if _, err := top.Page(q); err != ErrBadQuery {
			t.Errorf("Page(%+v) = %v, want ErrBadQuery", q, err)
		}
	}
}

// TestPageVisible: what Visible hides is neither listed nor counted.
func TestPageVisible(t *testing.T) {
	dir := t.TempDir()
	put(t, dir, "db/a.sql", 5, base)
	put(t, dir, "web/site.tar", 7, base)
	put(t, dir, "web/secret.tar", 100, base.Add(time.Hour))
	c := New(dir)
	defer c.Close()
	top, _ := c.Tree()
	visible := func(p string) bool { return p != "db/" && p != "web/secret.tar" }
	p, err := top.Page(Query{Limit: 10, Visible: visible})
	if err != nil {
		t.Fatal(err)
	}
	if names(p) != "web/" || p.Folders[0].Count != 1 || p.Folders[0].Size != 7 || p.Folder.Count != 1 || !p.Folder.Newest.Equal(base) {
		t.Fatalf("page %+v", p)
	}
	web, _ := top.Lookup("web/")
	p, _ = web.Page(Query{Limit: 10, Visible: visible})
	if names(p) != "site.tar" {
		t.Fatalf("web/ = %q", names(p))
	}
}

// TestCursorWalk: walking a folder page by page, forwards and back,
// visits every backup present throughout exactly once, while backups are
// added between the pages.
func TestCursorWalk(t *testing.T) {
	for _, sortBy := range []string{SortModified, SortName, SortSize} {
		t.Run(sortBy, func(t *testing.T) {
			dir := t.TempDir()
			for i := range 95 {
				// Ties on purpose: sizes and times repeat.
				put(t, dir, fmt.Sprintf("f%03d.tar", i), i%7, base.Add(time.Duration(i%5)*time.Minute))
			}
			put(t, dir, "sub/in.tar", 1, base)
			c := New(dir)
			defer c.Close()
			seen := map[string]int{}
			cursor, added := "", 0
			for pages := 0; ; pages++ {
				if pages > 50 {
					t.Fatal("the walk does not end")
				}
				top, err := c.Tree()
				if err != nil {
					t.Fatal(err)
				}
				p, err := top.Page(Query{Sort: sortBy, Limit: 10, Cursor: cursor})
				if err != nil {
					t.Fatal(err)
				}
				for _, b := range p.Backups {
					seen[b.Name]++
				}
				for _, f := range p.Folders {
					seen[f.Name+"/"]++
				}
				// A new backup between pages, sorting anywhere.
				put(t, dir, fmt.Sprintf("new%02d.tar", added), added%9, base.Add(time.Duration(added%6)*time.Minute))
				added++
				c.markDirty("")
				if p.Next == "" {
					break
				}
				cursor = p.Next
			}
			for i := range 95 {
				if n := seen[fmt.Sprintf("f%03d.tar", i)]; n != 1 {
					t.Errorf("f%03d.tar seen %d times", i, n)
				}
			}
			if seen["sub/"] != 1 {
				t.Errorf("sub/ seen %d times", seen["sub/"])
			}
			for name, n := range seen {
				if n != 1 {
					t.Errorf("%s seen %d times", name, n)
				}
			}
			// And back: Prev pages lead to the first page again.
			top, _ := c.Tree()
			all, _ := top.Page(Query{Sort: sortBy, Limit: MaxLimit})
			var fwd []string
			cursor = ""
			var last Page
			for cursor != "" || len(fwd) == 0 {
				last, _ = top.Page(Query{Sort: sortBy, Limit: 7, Cursor: cursor})
				fwd = append(fwd, names(last))
				cursor = last.Next
			}
			var back []string
			for p := last; ; {
				back = append(back, names(p))
				if p.Prev == "" {
					break
				}
				p, _ = top.Page(Query{Sort: sortBy, Limit: 7, Cursor: p.Prev})
			}
			slices.Reverse(back)
			if strings.Join(back, " ") != names(all) || strings.Join(fwd, " ") != names(all) {
				t.Errorf("pages forwards %q\nbackwards %q\nall %q", fwd, back, names(all))
			}
		})
	}
}

// FuzzPage: any cursor, search text or order either gives a page or
// ErrBadQuery, never a panic, and a page never holds more than its limit.
func FuzzPage(f *testing.F) {
	dir := f.TempDir()
	for i := range 12 {
		put(f, dir, fmt.Sprintf("d%d/x.tar", i%3), i, base)
		put(f, dir, fmt.Sprintf("f%02d.tar", i), i, base.Add(time.Duration(i)*time.Minute))
	}
	c := New(dir)
	defer c.Close()
	top, err := c.Tree()
	if err != nil {
		f.Fatal(err)
	}
	q := Query{Sort: SortName, Limit: 3}
	first, _ := top.Page(q)
	f.Add(first.Next, "", "name", "", 3)
	f.Add("", "F0", "size", "asc", 1)
	f.Add("bmFtZSBmYWxzZSBmYWxzZSB0cnVlIDAgZDE", "", "name", "", 2)
	f.Add("!!", "\x00", "modified", "desc", 1000)
	f.Fuzz(func(t *testing.T, cursor, search, sort, order string, limit int) {
		s, desc, ok := ParseOrder(sort, order)
		if !ok {
			return
		}
		p, err := top.Page(Query{Q: search, Sort: s, Desc: desc, Limit: limit, Cursor: cursor})
		if err != nil {
			if err != ErrBadQuery {
				t.Fatalf("error %v", err)
			}
			return
		}
		if n := len(p.Folders) + len(p.Backups); n > limit {
			t.Fatalf("%d entries on a page of %d", n, limit)
		}
	})
}
