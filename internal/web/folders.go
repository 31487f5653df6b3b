package web

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/backupweb/backupweb/internal/access"
	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/catalog"
	"github.com/backupweb/backupweb/internal/refusal"
	"github.com/backupweb/backupweb/internal/ui"
)

// listingParams are the query parameters of a folder's listing; any of
// them on GET /api/backups asks for the folder shape instead of the flat
// list of the top folder's backups.
var listingParams = []string{"path", "q", "sort", "order", "limit", "cursor"}

// maxQueryLen bounds the search text: longer is refused, not cut.
const maxQueryLen = 200

// browse serves GET /backups/{path...}: a folder's page when the path is
// empty or ends in a slash, a backup's download otherwise.
func (s *site) browse(w http.ResponseWriter, r *http.Request) {
	p := r.PathValue("path")
	// An encoded slash would make two segments of one: no name holds a
	// slash, so it names nothing.
	if raw := strings.ToLower(r.URL.EscapedPath()); strings.Contains(raw, "%2f") || strings.Contains(raw, "%5c") {
		s.fail(w, r, refusal.NoBackup)
		return
	}
	if p == "" || strings.HasSuffix(p, "/") {
		s.folderPage(w, r, p)
		return
	}
	if s.toFolder(w, r, p) {
		return
	}
	s.download(w, r, p)
}

// toFolder answers a request for the folder rel written without its final
// slash with 301 to the folder (the path as the client spelled it, with a
// slash, and the query kept), as web servers answer, and reports whether
// it did. A folder the rules hide from the user is refused as the folder
// itself would be, so the redirect tells no more than the folder's page.
func (s *site) toFolder(w http.ResponseWriter, r *http.Request, rel string) bool {
	if s.cat == nil {
		return false
	}
	top, err := s.cat.Tree()
	if err != nil {
		return false // the download reports it
	}
	if _, err := top.Lookup(rel); err != nil {
		return false
	}
	if visible, _ := s.visibility(r); visible != nil && !visible(rel+"/") {
		s.refuseFolder(w, r, rel+"/")
		return true
	}
	target := r.URL.EscapedPath() + "/"
	if r.URL.RawQuery != "" {
		target += "?" + r.URL.RawQuery
	}
	http.Redirect(w, r, target, http.StatusMovedPermanently)
	return true
}

// catalogPage serves GET /: the top folder's page.
func (s *site) catalogPage(w http.ResponseWriter, r *http.Request) {
	s.folderPage(w, r, "")
}

// folderOf returns the folder at rel, answering the request itself (and
// returning nil) when there is none or it cannot be read.
func (s *site) folderOf(w http.ResponseWriter, r *http.Request, rel string) *catalog.Folder {
	if s.cat == nil {
		s.log.ErrorContext(r.Context(), "web: list backups", "err", errNoCatalog)
		s.fail(w, r, refusal.ListFailed)
		return nil
	}
	top, err := s.cat.Tree()
	if err != nil {
		s.log.ErrorContext(r.Context(), "web: list backups", "err", err)
		s.fail(w, r, refusal.ListFailed)
		return nil
	}
	f, err := top.Lookup(rel)
	if err != nil {
		s.fail(w, r, refusal.NoFolder)
		return nil
	}
	return f
}

// listingQuery reads a listing's parameters from r; false when one cannot
// be read. The limit is defLimit when not given, and lowered to maxLimit
// when larger: pages take catalog.DefaultLimit and catalog.MaxPageLimit,
// the API catalog.MaxLimit for both.
func listingQuery(r *http.Request, defLimit, maxLimit int) (catalog.Query, bool) {
	v := r.URL.Query()
	q := catalog.Query{Q: v.Get("q"), Limit: defLimit, Cursor: v.Get("cursor")}
	if len(q.Q) > maxQueryLen || !utf8.ValidString(q.Q) {
		return q, false
	}
	var ok bool
	if q.Sort, q.Desc, ok = catalog.ParseOrder(v.Get("sort"), v.Get("order")); !ok {
		return q, false
	}
	if l := v.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 {
			return q, false
		}
		q.Limit = min(n, maxLimit)
	}
	return q, true
}

// visibility returns the test of what the request's user may open: GET
// /backups/PATH under the access rules, as the routes decide it, and a key
// naming everything the test depends on (the rules, the host, the user
// and what the rules know of them), under which the catalog may remember
// a folder's totals. Nil and "" when there are no rules (everything is
// visible).
func (s *site) visibility(r *http.Request) (func(string) bool, string) {
	g := s.guard
	if g.idle() || g.rules.Empty() {
		return nil, ""
	}
	var who access.Who
	if u, ok := auth.FromContext(r.Context()); ok {
		_, who = g.who(u)
	}
	// The request's one reading, for each folder's path: a listing that
	// names another method (an override) is decided with it, as the
	// listing itself was.
	base := access.TargetOf(r)
	key := fmt.Sprintf("%p\x00%s\x00%q\x00%q\x00%t\x00%q\x00%q\x00%t\x00%t", g.rules, access.NormalHost(base.Host), base.Method, base.Overrides, who.SignedIn, who.Name, who.Groups, who.GroupsKnown, who.SecondFactor)
	return func(p string) bool {
		t := base.WithURL(&url.URL{Path: "/backups/" + p})
		return g.rules.Decide(t, who).Permits(who)
	}, key
}

// stale reports whether a folder whose newest backup is newest is stale:
// [backups] max_age is set and it is older. A folder without backups is
// not stale.
func (s *site) stale(newest time.Time) bool {
	return s.maxAge > 0 && !newest.IsZero() && s.now().Sub(newest) > s.maxAge
}

// folderPage serves the page of the folder rel.
func (s *site) folderPage(w http.ResponseWriter, r *http.Request, rel string) {
	f := s.folderOf(w, r, rel)
	if f == nil {
		return
	}
	if r.URL.Query().Has(archiveParam) {
		s.archiveFolder(w, r, f)
		return
	}
	q, ok := listingQuery(r, catalog.DefaultLimit, catalog.MaxPageLimit)
	if !ok {
		s.fail(w, r, refusal.BadListing)
		return
	}
	q.Visible, q.VisibleKey = s.visibility(r)
	page, err := f.Page(q)
	if err != nil {
		s.fail(w, r, refusal.BadListing)
		return
	}
	u, _ := auth.FromContext(r.Context())
	data := s.pageData(r, f, q, page)
	data.Brand, data.User = ui.BrandOf(r.Context()), s.viewer(u)
	if err := ui.Render(w, http.StatusOK, "catalog", data); err != nil {
		s.log.ErrorContext(r.Context(), "web: rendering the catalog page", "err", err)
	}
}

// pageData is the view of one page of the folder rel.
func (s *site) pageData(r *http.Request, f *catalog.Folder, q catalog.Query, p catalog.Page) ui.CatalogPage {
	rel := f.Path
	href := ui.BackupsHref(rel)
	sortName, order := q.Sort, "asc"
	if q.Desc {
		order = "desc"
	}
	link := func(sortBy, ord, cursor string) string {
		v := url.Values{}
		if q.Q != "" {
			v.Set("q", q.Q)
		}
		if sortBy != catalog.SortModified {
			v.Set("sort", sortBy)
		}
		if ord != "" {
			v.Set("order", ord)
		}
		if l := r.URL.Query().Get("limit"); l != "" {
			v.Set("limit", strconv.Itoa(q.Limit))
		}
		if cursor != "" {
			v.Set("cursor", cursor)
		}
		if len(v) == 0 {
			return href
		}
		return href + "?" + v.Encode()
	}
	shrunk := f.Shrunk(s.shrink, q.Visible)
	d := ui.CatalogPage{
		Title: "Backups", Path: rel, Href: href,
		Count: p.Folder.Count, Size: p.Folder.Size, Newest: p.Folder.Newest, Stale: s.stale(p.Folder.Newest),
		Shrunk: shrunk,
		Q:      q.Q, Sort: sortName, Order: order, Backups: p.Backups, Checks: s.checks(rel, p.Backups),
		Sorts:      map[string]ui.SortLink{},
		ConfigFile: s.configFile, NoConfigFile: s.configMissing,
	}
	if s.maxAge > 0 {
		d.MaxAge = shortDuration(s.maxAge)
	}
	if q.Q == "" {
		// A search's answer names only what matches: no chart of the
		// rest.
		d.Chart = chartOf(f, q.Visible, shrunk)
	}
	if rel != "" {
		parts := strings.Split(strings.TrimSuffix(rel, "/"), "/")
		d.Title = parts[len(parts)-1]
		d.Crumbs = append(d.Crumbs, ui.Link{Label: "Backups", Path: "/"})
		for i := range parts[:len(parts)-1] {
			sub := strings.Join(parts[:i+1], "/") + "/"
			d.Crumbs = append(d.Crumbs, ui.Link{Label: parts[i], Path: ui.BackupsHref(sub)})
		}
	}
	for _, e := range p.Folders {
		d.Folders = append(d.Folders, ui.FolderRow{Name: e.Name, Href: ui.BackupsHref(e.Path), Count: e.Count, Size: e.Size, Newest: e.Newest, Stale: s.stale(e.Newest),
			Shrunk: s.shrunk(f, e.Name, q.Visible)})
	}
	for _, by := range []string{catalog.SortName, catalog.SortSize, catalog.SortModified} {
		sl := ui.SortLink{Current: by == q.Sort}
		next := ""
		if sl.Current {
			sl.Ascending = !q.Desc
			next = "desc"
			if q.Desc {
				next = "asc"
			}
		}
		sl.Href = link(by, next, "")
		d.Sorts[by] = sl
	}
	keepOrder := order
	if _, def, _ := catalog.ParseOrder(q.Sort, ""); def == q.Desc {
		keepOrder = ""
	}
	if p.Next != "" {
		d.Next = link(q.Sort, keepOrder, p.Next)
	}
	if p.Prev != "" {
		d.Prev = link(q.Sort, keepOrder, p.Prev)
	}
	return d
}

// chartOf is the history chart of f's own backups that visible lets
// through (nil: all), the newest ui.MaxChartPoints drawn; nil when there
// are none.
func chartOf(f *catalog.Folder, visible func(string) bool, shrunk bool) *ui.Chart {
	points := make([]ui.ChartPoint, 0, min(len(f.Backups), ui.MaxChartPoints))
	total := 0
	for i := range f.Backups {
		b := &f.Backups[i]
		if visible != nil && !visible(f.Path+b.Name) {
			continue
		}
		total++
		if len(points) < ui.MaxChartPoints {
			points = append(points, ui.ChartPoint{Name: b.Name, Size: b.Size, At: b.Modified})
		}
	}
	return ui.NewChart(points, total, shrunk)
}

// checks returns the last verification of each of backups of the folder
// rel that has one for the file as it is now, by name; nil when none has.
func (s *site) checks(rel string, backups []catalog.Backup) map[string]*ui.Check {
	var out map[string]*ui.Check
	for _, b := range backups {
		if b.SHA256 == "" {
			continue
		}
		if res, at, ok := s.cat.LastCheck(rel+b.Name, b); ok {
			if out == nil {
				out = map[string]*ui.Check{}
			}
			out[b.Name] = &ui.Check{Result: res, At: at}
		}
	}
	return out
}

// shrunk reports whether the subfolder name of f shrank (see
// catalog.Folder.Shrunk), over what visible lets through.
func (s *site) shrunk(f *catalog.Folder, name string, visible func(string) bool) bool {
	sub, err := f.Lookup(name)
	return err == nil && sub.Shrunk(s.shrink, visible)
}

// shortDuration writes d as Go does, without its zero tails: "26h", not
// "26h0m0s"; "1h30m"; "90s" stays "1m30s".
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// folderJSON is a subfolder in GET /api/backups?path=.
type folderJSON struct {
	Name    string  `json:"name"`
	Backups int     `json:"backups"`
	Size    int64   `json:"size"`
	Newest  *string `json:"newest"` // null: no backup below it
	Stale   bool    `json:"stale,omitempty"`
	// Shrunk: its own newest backup shrank (catalog.Folder.Shrunk).
	Shrunk bool `json:"shrunk,omitempty"`
}

// fileJSON is a backup in GET /api/backups?path=.
type fileJSON struct {
	Name     string `json:"name"`
	Size     int64  `json:"size"`
	Modified string `json:"modified"`
	SHA256   string `json:"sha256,omitempty"`
	// SHA256Stale: the checksum file is older than the backup.
	SHA256Stale bool `json:"sha256_stale,omitempty"`
	// Verified is the last verification of the bytes against SHA256
	// ("ok", "mismatch", "unreadable"), VerifiedAt when; both left out
	// when the file as it is now was never verified.
	Verified   string `json:"verified,omitempty"`
	VerifiedAt string `json:"verified_at,omitempty"`
}

// listingJSON is GET /api/backups?path='s answer.
type listingJSON struct {
	Path    string       `json:"path"`
	Stale   bool         `json:"stale,omitempty"`
	Shrunk  bool         `json:"shrunk,omitempty"`
	Folders []folderJSON `json:"folders"`
	Backups []fileJSON   `json:"backups"`
	Next    string       `json:"next,omitempty"`
}

// hasListingParams reports whether r asks for the folder shape.
func hasListingParams(r *http.Request) bool {
	if r.URL.RawQuery == "" {
		return false
	}
	v := r.URL.Query()
	for _, k := range listingParams {
		if v.Has(k) {
			return true
		}
	}
	return false
}

// folderParam is the folder a listing asks for: its path parameter, with
// a final slash ("" for the top).
func folderParam(r *http.Request) string {
	rel := r.URL.Query().Get("path")
	if rel != "" && !strings.HasSuffix(rel, "/") {
		rel += "/"
	}
	return rel
}

// listingScope lets a machine token's scope read a folder's listing
// (GET /api/backups?path=FOLDER/&…) as GET /backups/FOLDER/ (see
// access.ScopedAs): a token limited to /backups/db/ lists db/ and what is
// below it, and no other folder.
func listingScope(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hasListingParams(r) {
			r = access.ScopedAs(r, &url.URL{Path: "/backups/" + folderParam(r)})
		}
		next.ServeHTTP(w, r)
	})
}

// apiFolder serves GET /api/backups?path=FOLDER/&…: one page of a folder
// as JSON, with a strong ETag (a digest of the answer).
func (s *site) apiFolder(w http.ResponseWriter, r *http.Request) {
	rel := folderParam(r)
	if strings.HasPrefix(rel, "/") {
		s.fail(w, r, refusal.NoFolder)
		return
	}
	q, ok := listingQuery(r, catalog.MaxLimit, catalog.MaxLimit)
	if !ok {
		s.fail(w, r, refusal.BadListing)
		return
	}
	q.Visible, q.VisibleKey = s.visibility(r)
	if rel != "" && q.Visible != nil && !q.Visible(rel) {
		// As GET /backups/FOLDER/ would answer.
		s.refuseFolder(w, r, rel)
		return
	}
	f := s.folderOf(w, r, rel)
	if f == nil {
		return
	}
	page, err := f.Page(q)
	if err != nil {
		s.fail(w, r, refusal.BadListing)
		return
	}
	out := listingJSON{Path: rel, Stale: s.stale(page.Folder.Newest), Shrunk: f.Shrunk(s.shrink, q.Visible), Folders: make([]folderJSON, 0, len(page.Folders)), Backups: make([]fileJSON, 0, len(page.Backups)), Next: page.Next}
	for _, e := range page.Folders {
		fj := folderJSON{Name: e.Name, Backups: e.Count, Size: e.Size, Stale: s.stale(e.Newest), Shrunk: s.shrunk(f, e.Name, q.Visible)}
		if !e.Newest.IsZero() {
			t := e.Newest.UTC().Format(time.RFC3339)
			fj.Newest = &t
		}
		out.Folders = append(out.Folders, fj)
	}
	for _, b := range page.Backups {
		fj := fileJSON{Name: b.Name, Size: b.Size, Modified: b.Modified.UTC().Format(time.RFC3339), SHA256: b.SHA256, SHA256Stale: b.SumStale}
		if b.SHA256 != "" {
			if res, at, ok := s.cat.LastCheck(rel+b.Name, b); ok {
				fj.Verified, fj.VerifiedAt = res, at.UTC().Format(time.RFC3339)
			}
		}
		out.Backups = append(out.Backups, fj)
	}
	body, err := json.Marshal(out)
	if err != nil {
		s.log.ErrorContext(r.Context(), "web: encode json", "path", r.URL.Path, "err", err)
		s.fail(w, r, refusal.EncodeFailed)
		return
	}
	serveTagged(w, r, append(body, '\n'))
}

// refuseFolder answers a request for a folder the rules hide from the
// user as the guard answers GET /backups/FOLDER/: 403, logged.
func (s *site) refuseFolder(w http.ResponseWriter, r *http.Request, rel string) {
	u, ok := auth.FromContext(r.Context())
	if !ok {
		s.fail(w, r, refusal.RuleDenied)
		return
	}
	t := access.TargetOf(r).WithURL(&url.URL{Path: "/backups/" + rel})
	if _, ok := s.guard.admit(w, r, u, t); ok {
		s.fail(w, r, refusal.RuleDenied) // the rules changed their mind: still refused
	}
}

// serveTagged writes a JSON body with a strong ETag (a digest of it), or
// 304 when If-None-Match names it.
func serveTagged(w http.ResponseWriter, r *http.Request, body []byte) {
	sum := sha256.Sum256(body)
	etag := `"` + base64.RawURLEncoding.EncodeToString(sum[:18]) + `"`
	h := w.Header()
	apiHeaders(h)
	h.Set("Etag", etag)
	if inm := r.Header.Get("If-None-Match"); inm != "" && etagMatches(inm, etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h["Content-Type"] = jsonContentType
	w.WriteHeader(http.StatusOK)
	w.Write(body)
}

// reprDigest is the Repr-Digest header value (RFC 9530) of a hex SHA-256,
// "" when it is not one.
func reprDigest(hexSum string) string {
	if len(hexSum) != 64 {
		return ""
	}
	raw := make([]byte, 32)
	for i := range raw {
		v, err := strconv.ParseUint(hexSum[2*i:2*i+2], 16, 8)
		if err != nil {
			return ""
		}
		raw[i] = byte(v)
	}
	return "sha-256=:" + base64.StdEncoding.EncodeToString(raw) + ":"
}
