package catalog

import (
	"cmp"
	"encoding/base64"
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The orders a folder's page can be sorted in.
const (
	SortModified = "modified" // the newest backup's time; newest first by default
	SortName     = "name"     // by name, A to Z by default
	SortSize     = "size"     // largest first by default
)

// Paging limits: a page holds Limit entries, DefaultLimit when none is
// asked, and never more than MaxLimit (MaxPageLimit on an HTML page,
// whose rows are larger than JSON's: 500 rows stay under 300 KiB).
const (
	DefaultLimit = 100
	MaxPageLimit = 500
	MaxLimit     = 1000
)

// ErrBadQuery means a query's sort, order, limit or cursor cannot be read.
var ErrBadQuery = errors.New("catalog: bad listing query")

// Query asks for one page of a folder: its subfolders first, then its
// backups, those whose name holds Q (case-insensitive), sorted.
type Query struct {
	// Q keeps the entries whose name holds it, in any case; "" keeps all.
	Q string
	// Sort is SortModified (""), SortName or SortSize.
	Sort string
	// Desc reverses the order of Sort: by default newest, largest first
	// and names from A; Ascending asks the opposite for modified and
	// size, Descending for names. See Order.
	Desc bool
	// Limit is the page's size, 1 to MaxLimit.
	Limit int
	// Cursor is a previous page's Next or Prev, "" for the first page.
	Cursor string
	// Visible, when set, tells whether the user may see the folder or
	// backup at a path ("db/" for a folder, "db/x.tar" for a backup);
	// what it hides is left out of the page and of every total.
	Visible func(path string) bool
	// VisibleKey, when not "", names what Visible decides (the rules and
	// the user): a folder's totals under Visible are then remembered
	// with the folder, for as long as it is unchanged, and computed once
	// per key rather than at every page.
	VisibleKey string
}

// maxTotalsKeys bounds the keys whose totals one folder remembers; past
// it the folder forgets them all and starts again.
const maxTotalsKeys = 64

// ParseOrder reads the sort and order parameters: sort "" means
// SortModified; order "" the sort's own default (descending for modified
// and size, ascending for name). It reports false for anything else.
func ParseOrder(sort, order string) (string, bool, bool) {
	sort = cmp.Or(sort, SortModified)
	if sort != SortModified && sort != SortName && sort != SortSize {
		return "", false, false
	}
	switch order {
	case "":
		return sort, sort != SortName, true
	case "asc":
		return sort, false, true
	case "desc":
		return sort, true, true
	}
	return "", false, false
}

// Entry is a subfolder as a page shows it: its totals count only what the
// query's Visible lets through.
type Entry struct {
	Name   string
	Path   string // with its final slash
	Count  int
	Size   int64
	Newest time.Time
}

// Page is one page of a folder.
type Page struct {
	// Folder is the folder itself, with totals over what is visible.
	Folder Entry
	// Folders and Backups are the page's entries, in the query's order.
	Folders []Entry
	Backups []Backup
	// Next and Prev are the cursors of the following and preceding
	// pages, "" when there is none.
	Next, Prev string
}

// item is one entry of the combined order: folders, then backups.
type item struct {
	folder bool
	key    int64
	name   string
}

// compare orders items as the query asks: folders first, then by key (or
// name), ties by name.
func (q *Query) compare(a, b item) int {
	if a.folder != b.folder {
		if a.folder {
			return -1
		}
		return 1
	}
	if q.Sort == SortName {
		if q.Desc {
			return strings.Compare(b.name, a.name)
		}
		return strings.Compare(a.name, b.name)
	}
	c := cmp.Compare(a.key, b.key)
	if q.Desc {
		c = -c
	}
	if c != 0 {
		return c
	}
	return strings.Compare(a.name, b.name)
}

func (q *Query) fileKey(b *Backup) int64 {
	if q.Sort == SortSize {
		return b.Size
	}
	return b.Modified.UnixNano()
}

func (q *Query) folderKey(e *Entry) int64 {
	if q.Sort == SortSize {
		return e.Size
	}
	if e.Newest.IsZero() {
		return 0
	}
	return e.Newest.UnixNano()
}

// cursor is a position between two items: after it (Next) or before it
// (Prev). Its text is opaque to clients: base64url of the sort, the
// direction and the item.
type cursor struct {
	before bool
	at     item
}

func (q *Query) encode(c cursor) string {
	var b strings.Builder
	b.WriteString(q.Sort)
	b.WriteByte(' ')
	b.WriteString(strconv.FormatBool(q.Desc))
	b.WriteByte(' ')
	b.WriteString(strconv.FormatBool(c.before))
	b.WriteByte(' ')
	b.WriteString(strconv.FormatBool(c.at.folder))
	b.WriteByte(' ')
	b.WriteString(strconv.FormatInt(c.at.key, 10))
	b.WriteByte(' ')
	b.WriteString(c.at.name)
	return base64.RawURLEncoding.EncodeToString([]byte(b.String()))
}

func (q *Query) decode(s string) (cursor, error) {
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return cursor{}, ErrBadQuery
	}
	f := strings.SplitN(string(raw), " ", 6)
	if len(f) != 6 || f[0] != q.Sort || f[1] != strconv.FormatBool(q.Desc) {
		return cursor{}, ErrBadQuery
	}
	before, err1 := strconv.ParseBool(f[2])
	folder, err2 := strconv.ParseBool(f[3])
	key, err3 := strconv.ParseInt(f[4], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil {
		return cursor{}, ErrBadQuery
	}
	return cursor{before: before, at: item{folder: folder, key: key, name: f[5]}}, nil
}

// Page returns one page of f as q asks, or ErrBadQuery.
func (f *Folder) Page(q Query) (Page, error) {
	if q.Sort == "" {
		q.Sort = SortModified
	}
	if q.Limit < 1 || q.Limit > MaxLimit {
		return Page{}, ErrBadQuery
	}
	var cur *cursor
	if q.Cursor != "" {
		c, err := q.decode(q.Cursor)
		if err != nil {
			return Page{}, err
		}
		cur = &c
	}
	self, folders := f.visibleEntries(&q)
	p := Page{Folder: self}
	needle := strings.ToLower(q.Q)
	match := func(name string) bool { return needle == "" || strings.Contains(strings.ToLower(name), needle) }
	folders = slices.DeleteFunc(folders, func(e Entry) bool { return !match(e.Name) })
	slices.SortFunc(folders, func(a, b Entry) int {
		return q.compare(item{true, q.folderKey(&a), a.Name}, item{true, q.folderKey(&b), b.Name})
	})
	order := f.order(&q)
	s := seq{q: &q, f: f, folders: folders, order: order, match: match}
	n := len(folders) + len(order)
	start, forward := 0, true
	if cur != nil {
		start = s.search(cur.at)
		if cur.before {
			forward = false
		} else if start < n && q.compare(s.item(start), cur.at) == 0 {
			start++
		}
	}
	var picked []int
	if forward {
		for i := start; i < n && len(picked) < q.Limit; i++ {
			if s.keep(i) {
				picked = append(picked, i)
			}
		}
	} else {
		for i := start - 1; i >= 0 && len(picked) < q.Limit; i-- {
			if s.keep(i) {
				picked = append(picked, i)
			}
		}
		slices.Reverse(picked)
	}
	if len(picked) == 0 {
		return p, nil
	}
	first, last := picked[0], picked[len(picked)-1]
	if s.any(last+1, n, 1) {
		p.Next = q.encode(cursor{at: s.item(last)})
	}
	if s.any(first-1, -1, -1) {
		p.Prev = q.encode(cursor{before: true, at: s.item(first)})
	}
	for _, i := range picked {
		if i < len(folders) {
			p.Folders = append(p.Folders, folders[i])
		} else {
			p.Backups = append(p.Backups, f.Backups[order[i-len(folders)]])
		}
	}
	return p, nil
}

// seq is the combined order of one page's query: the matching folders,
// then every backup of the folder in order, filtered as it is walked.
type seq struct {
	q       *Query
	f       *Folder
	folders []Entry
	order   []int32
	match   func(string) bool
}

func (s *seq) item(i int) item {
	if i < len(s.folders) {
		e := &s.folders[i]
		return item{true, s.q.folderKey(e), e.Name}
	}
	b := &s.f.Backups[s.order[i-len(s.folders)]]
	return item{false, s.q.fileKey(b), b.Name}
}

// keep reports whether the i-th item is on a page: a folder is when it is
// in s.folders; a backup when its name matches and it is visible.
func (s *seq) keep(i int) bool {
	if i < len(s.folders) {
		return true
	}
	b := &s.f.Backups[s.order[i-len(s.folders)]]
	return s.match(b.Name) && (s.q.Visible == nil || s.q.Visible(s.f.Path+b.Name))
}

// any reports whether an item from i towards end (step ±1) is kept.
func (s *seq) any(i, end, step int) bool {
	for ; i != end; i += step {
		if s.keep(i) {
			return true
		}
	}
	return false
}

// search returns the index of the first item not before at.
func (s *seq) search(at item) int {
	n := len(s.folders) + len(s.order)
	lo, hi := 0, n
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if s.q.compare(s.item(m), at) < 0 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// orderKey names one order of a folder's backups.
type orderKey struct {
	sort string
	desc bool
}

// order returns f.Backups' indexes in q's order, computed once per folder
// reading and order.
func (f *Folder) order(q *Query) []int32 {
	k := orderKey{q.Sort, q.Desc}
	if o, ok := f.orders.Load(k); ok {
		return o.([]int32)
	}
	o := make([]int32, len(f.Backups))
	for i := range o {
		o[i] = int32(i)
	}
	if q.Sort != SortModified || !q.Desc {
		slices.SortFunc(o, func(a, b int32) int {
			x, y := &f.Backups[a], &f.Backups[b]
			return q.compare(item{false, q.fileKey(x), x.Name}, item{false, q.fileKey(y), y.Name})
		})
	}
	f.orders.Store(k, o)
	return o
}

// visibleEntries returns f and its subfolders with totals over what
// q.Visible lets through; a hidden subfolder is left out, with everything
// below it.
func (f *Folder) visibleEntries(q *Query) (Entry, []Entry) {
	self := Entry{Name: f.Name, Path: f.Path}
	subs := make([]Entry, 0, len(f.Folders))
	for _, s := range f.Folders {
		if q.Visible != nil && !q.Visible(s.Path) {
			continue
		}
		e := s.visibleTotals(q.Visible, q.VisibleKey)
		subs = append(subs, e)
		self.add(e)
	}
	for i := range f.Backups {
		b := &f.Backups[i]
		if q.Visible == nil || q.Visible(f.Path+b.Name) {
			self.add(Entry{Count: 1, Size: b.Size, Newest: b.Modified})
		}
	}
	return self, subs
}

// add counts e's totals in t.
func (t *Entry) add(e Entry) {
	t.Count += e.Count
	t.Size += e.Size
	if e.Newest.After(t.Newest) {
		t.Newest = e.Newest
	}
}

// visibleTotals is f's entry with totals over what visible (nil: all)
// lets through, remembered under key when it is not "".
func (f *Folder) visibleTotals(visible func(string) bool, key string) Entry {
	e := Entry{Name: f.Name, Path: f.Path}
	if visible == nil {
		e.Count, e.Size, e.Newest = f.Count, f.Size, f.Newest
		return e
	}
	if key != "" {
		if v, ok := f.totals.Load(key); ok {
			return v.(Entry)
		}
		defer func() {
			if f.totalsKeys.Add(1) > maxTotalsKeys {
				f.totals.Clear()
				f.totalsKeys.Store(1)
			}
			f.totals.Store(key, e)
		}()
	}
	for _, s := range f.Folders {
		if visible(s.Path) {
			e.add(s.visibleTotals(visible, key))
		}
	}
	for i := range f.Backups {
		if b := &f.Backups[i]; visible(f.Path + b.Name) {
			e.add(Entry{Count: 1, Size: b.Size, Newest: b.Modified})
		}
	}
	return e
}
