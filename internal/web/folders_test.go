package web

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/access"
	"github.com/backupweb/backupweb/internal/auth/none"
	"github.com/backupweb/backupweb/internal/catalog"
	"github.com/backupweb/backupweb/internal/testkit"
)

// oddNames are names that must list and download as they are.
var oddNames = []string{"with space.tar", "ünïcode-データ.tar", "hash#1.tar", "what?.tar", "100%.tar", "a+b&c=d.tar"}

// treeFixture builds a nested backups folder: hosts by folder, odd names,
// a checksum file, dot files, links leading out and in.
func treeFixture(t testing.TB) (dir, outside string) {
	t.Helper()
	top := t.TempDir()
	dir = filepath.Join(top, "backups")
	outside = filepath.Join(top, "outside")
	must(t, os.MkdirAll(outside, 0o700))
	writeBackup(t, outside, "secret.txt", "top secret", base)
	put := func(rel, content string, mod time.Time) {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		must(t, os.MkdirAll(filepath.Dir(p), 0o700))
		writeBackup(t, filepath.Dir(p), filepath.Base(p), content, mod)
	}
	put("db/pg-1.sql.zst", "pg one", base)
	put("db/pg-2.sql.zst", "pg two!", base.Add(time.Hour))
	put("web/site.tar.zst", "SITE-CONTENT", base.Add(2*time.Hour))
	put("hosts/alpha/daily/a.tar", "alpha", base.Add(3*time.Hour))
	put("top.tar", "top", base)
	put(".hidden.tar", "HIDDEN-CONTENT", base)
	put(".git/config", "HIDDEN-CONTENT", base)
	for i, n := range oddNames {
		put("odd dir %#?/"+n, "odd "+n, base.Add(time.Duration(i)*time.Minute))
	}
	sum := sha256.Sum256([]byte("SITE-CONTENT"))
	put("web/SHA256SUMS", hex.EncodeToString(sum[:])+"  site.tar.zst\n", base.Add(2*time.Hour))
	if err := os.Symlink("/etc", filepath.Join(dir, "etc")); err != nil {
		t.Skipf("cannot create symbolic links here: %v", err)
	}
	must(t, os.Symlink(outside, filepath.Join(dir, "out")))
	must(t, os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(dir, "db", "secret.txt")))
	must(t, os.Symlink("../web", filepath.Join(dir, "db", "web-link")))
	return dir, outside
}

// treeServer serves dir over loopback with type none and the given
// options.
func treeServer(t testing.TB, dir string, o Options) *httptest.Server {
	t.Helper()
	cat := catalog.New(dir)
	t.Cleanup(func() { cat.Close() })
	log, _ := quietLogger()
	if o.Provider == nil {
		o.Provider = none.Provider{}
	}
	o.Catalog, o.Logger = cat, log
	srv := httptest.NewServer(NewHandler(o))
	t.Cleanup(srv.Close)
	return srv
}

func get(t testing.TB, c *http.Client, url string, header map[string]string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	must(t, err)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	if c == nil {
		c = http.DefaultClient
	}
	res, err := c.Do(req)
	must(t, err)
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	return res, string(body)
}

// TestFolderPages: folders at any depth, subfolders first with their
// totals, the top at / and /backups/.
func TestFolderPages(t *testing.T) {
	dir, _ := treeFixture(t)
	srv := treeServer(t, dir, Options{})
	for _, tt := range []struct {
		path     string
		want     []string
		dontWant []string
	}{
		{"/", []string{`href="/backups/db/"`, `href="/backups/hosts/"`, `href="/backups/web/"`, `href="/backups/top.tar"`, `2 backups`, `data value="13"`},
			[]string{".hidden.tar", ".git", `href="/backups/etc/"`, `href="/backups/out/"`, "SHA256SUMS", `rel="next"`}},
		{"/backups/", []string{`href="/backups/db/"`, `href="/backups/top.tar"`}, nil},
		{"/backups/hosts/", []string{`href="/backups/hosts/alpha/"`, `aria-current="page">hosts<`}, nil},
		{"/backups/hosts/alpha/daily/", []string{`href="/backups/hosts/alpha/daily/a.tar"`, `<a href="/backups/hosts/alpha/">alpha</a>`, `<a href="/">Backups</a>`}, nil},
		{"/backups/db/", []string{`href="/backups/db/pg-2.sql.zst"`}, []string{"secret.txt", "web-link", "site.tar"}},
		{"/backups/web/", []string{`SHA-256 <code>`}, []string{"SHA256SUMS"}},
	} {
		t.Run(tt.path, func(t *testing.T) {
			res, body := get(t, nil, srv.URL+tt.path, nil)
			if res.StatusCode != 200 {
				t.Fatalf("status %d: %s", res.StatusCode, body)
			}
			testkit.Holds(t, body, tt.want, tt.dontWant)
		})
	}
}

// hrefs returns the links of a page; downloads, with the download
// attribute, only when downloads is true.
func hrefs(page string, downloads bool) []string {
	re := regexp.MustCompile(`href="([^"]+)"`)
	if downloads {
		re = regexp.MustCompile(`href="([^"]+)" download`)
	}
	var out []string
	for _, m := range re.FindAllStringSubmatch(page, -1) {
		out = append(out, html.UnescapeString(m[1]))
	}
	return out
}

// TestOddNamesListAndDownload: names with spaces, unicode, '#', '?' and
// '%', in a folder whose name has them too, are linked so that following
// the link downloads the file.
func TestOddNamesListAndDownload(t *testing.T) {
	dir, _ := treeFixture(t)
	srv := treeServer(t, dir, Options{})
	_, top := get(t, nil, srv.URL+"/", nil)
	var folder string
	for _, h := range hrefs(top, false) {
		if strings.HasPrefix(h, "/backups/odd") {
			folder = h
		}
	}
	if folder != "/backups/odd%20dir%20%25%23%3F/" {
		t.Fatalf("folder link %q", folder)
	}
	_, page := get(t, nil, srv.URL+folder, nil)
	found := 0
	for _, h := range hrefs(page, true) {
		if !strings.HasPrefix(h, folder) {
			t.Errorf("download link %q outside the folder", h)
			continue
		}
		res, body := get(t, nil, srv.URL+h, nil)
		if res.StatusCode != 200 || !strings.HasPrefix(body, "odd ") {
			t.Errorf("%s: %d %q", h, res.StatusCode, body)
			continue
		}
		found++
	}
	if found != len(oddNames) {
		t.Errorf("%d of %d names downloaded from the page's links:\n%s", found, len(oddNames), page)
	}
}

// TestHostilePaths: nothing outside the folder, nothing hidden, nothing
// through a link, whatever the spelling.
func TestHostilePaths(t *testing.T) {
	dir, outside := treeFixture(t)
	srv := treeServer(t, dir, Options{})
	for _, target := range []string{
		"/backups/../outside/secret.txt",
		"/backups/db/../../outside/secret.txt",
		"/backups/%2e%2e/outside/secret.txt",
		"/backups/db/%2e%2e/%2e%2e/outside/secret.txt",
		"/backups/db/%2E%2E/web/site.tar.zst",
		"/backups/db%2fpg-1.sql.zst",
		"/backups/db%2Fpg-1.sql.zst",
		"/backups/web%2f",
		"/backups/%2fetc%2fpasswd",
		"/backups/db%5cpg-1.sql.zst",
		"/backups/db\\pg-1.sql.zst",
		"/backups/..%5c..%5coutside%5csecret.txt",
		"/backups/etc/passwd",
		"/backups/etc/",
		"/backups/out/secret.txt",
		"/backups/out/",
		"/backups/db/secret.txt",
		"/backups/db/web-link/site.tar.zst",
		"/backups/db/web-link/",
		"/backups/.hidden.tar",
		"/backups/.git/config",
		"/backups/.git/",
		"/backups/%2ehidden.tar",
		"/backups/web/SHA256SUMS",
		"/backups/db//pg-1.sql.zst",
		"/backups/db/./pg-1.sql.zst",
		"/backups/db/pg-1.sql.zst/",
		"/backups/db/pg-1.sql.zst%00",
		"/backups/nothing/",
		"/backups/nothing",
		"/backups/db/web-link",
		"/backups/" + strings.TrimPrefix(outside, "/") + "/secret.txt",
	} {
		t.Run(target, func(t *testing.T) {
			res, body := get(t, nil, srv.URL+target, map[string]string{"Accept": "text/html"})
			if res.StatusCode != http.StatusNotFound && res.StatusCode != http.StatusBadRequest {
				t.Fatalf("status %d, want 404", res.StatusCode)
			}
			for _, leak := range []string{"top secret", "HIDDEN-CONTENT", "SITE-CONTENT", "root:"} {
				if strings.Contains(body, leak) {
					t.Fatalf("the answer holds %q", leak)
				}
			}
			if res.Header.Get("Content-Disposition") != "" {
				t.Error("a refusal with Content-Disposition")
			}
		})
	}
	// The API's path too.
	for _, p := range []string{"../", "..", "%2e%2e/", "etc/", "out/", ".git/", "db/web-link/", "db//", "/", "db\\"} {
		res, body := get(t, nil, srv.URL+"/api/backups?path="+p, nil)
		if res.StatusCode != http.StatusNotFound || strings.Contains(body, "secret") || strings.Contains(body, "passwd") {
			t.Errorf("path=%s: %d %s", p, res.StatusCode, body)
		}
	}
}

// TestDownloadHeaders: a nested backup downloads with Range, ETag,
// Last-Modified and, when a checksum file gives it, Repr-Digest.
func TestDownloadHeaders(t *testing.T) {
	dir, _ := treeFixture(t)
	srv := treeServer(t, dir, Options{})
	res, body := get(t, nil, srv.URL+"/backups/web/site.tar.zst", nil)
	sum := sha256.Sum256([]byte("SITE-CONTENT"))
	wantDigest := "sha-256=:" + base64.StdEncoding.EncodeToString(sum[:]) + ":"
	etag := res.Header.Get("ETag")
	if res.StatusCode != 200 || body != "SITE-CONTENT" || res.Header.Get("Repr-Digest") != wantDigest || etag == "" ||
		res.Header.Get("Last-Modified") != lastModified(t, dir, "web/site.tar.zst") {
		t.Fatalf("%d %q %v", res.StatusCode, body, res.Header)
	}
	res, body = get(t, nil, srv.URL+"/backups/web/site.tar.zst", map[string]string{"Range": "bytes=5-"})
	if res.StatusCode != http.StatusPartialContent || body != "CONTENT" || res.Header.Get("Repr-Digest") != wantDigest {
		t.Fatalf("range: %d %q %v", res.StatusCode, body, res.Header)
	}
	if res, _ := get(t, nil, srv.URL+"/backups/web/site.tar.zst", map[string]string{"If-None-Match": etag}); res.StatusCode != http.StatusNotModified {
		t.Errorf("If-None-Match: %d", res.StatusCode)
	}
	res, _ = get(t, nil, srv.URL+"/backups/db/pg-1.sql.zst", nil)
	if res.StatusCode != 200 || res.Header.Get("Repr-Digest") != "" || res.Header.Get("ETag") == "" {
		t.Errorf("without a checksum: %d %v", res.StatusCode, res.Header)
	}
}

// listing is GET /api/backups?path='s answer.
type listing struct {
	Path    string `json:"path"`
	Stale   bool   `json:"stale"`
	Folders []struct {
		Name    string `json:"name"`
		Backups int    `json:"backups"`
		Size    int64  `json:"size"`
		Newest  string `json:"newest"`
		Stale   bool   `json:"stale"`
	} `json:"folders"`
	Backups []struct {
		Name        string `json:"name"`
		Size        int64  `json:"size"`
		Modified    string `json:"modified"`
		SHA256      string `json:"sha256"`
		SHA256Stale bool   `json:"sha256_stale"`
	} `json:"backups"`
	Next string `json:"next"`
}

func getListing(t testing.TB, c *http.Client, url string, header map[string]string) (listing, *http.Response) {
	t.Helper()
	res, body := get(t, c, url, header)
	var l listing
	if res.StatusCode == 200 {
		if err := json.Unmarshal([]byte(body), &l); err != nil {
			t.Fatalf("%s: %v", body, err)
		}
	}
	return l, res
}

// TestAPIFolders: the folder shape, its parameters, its refusals, and the
// flat answer without parameters.
func TestAPIFolders(t *testing.T) {
	dir, _ := treeFixture(t)
	srv := treeServer(t, dir, Options{})
	l, res := getListing(t, nil, srv.URL+"/api/backups?path=", nil)
	if res.StatusCode != 200 || l.Path != "" || len(l.Folders) != 4 || l.Folders[0].Name != "hosts" || len(l.Backups) != 1 || l.Backups[0].Name != "top.tar" {
		t.Fatalf("top: %d %+v", res.StatusCode, l)
	}
	if f := l.Folders[0]; f.Backups != 1 || f.Size != 5 || f.Newest != base.Add(3*time.Hour).Format(time.RFC3339) {
		t.Errorf("hosts: %+v", f)
	}
	// A folder without backups: newest is null, not left out.
	must(t, os.Mkdir(filepath.Join(dir, "empty"), 0o700))
	testkit.WaitUntil(t, 5*time.Second, func() bool {
		_, body := get(t, nil, srv.URL+"/api/backups?path=&q=empty", nil)
		return strings.Contains(body, `"folders":[{"name":"empty","backups":0,"size":0,"newest":null}]`)
	}, func() string { _, body := get(t, nil, srv.URL+"/api/backups?path=&q=empty", nil); return body })
	must(t, os.Remove(filepath.Join(dir, "empty")))
	testkit.WaitUntil(t, 5*time.Second, func() bool {
		_, body := get(t, nil, srv.URL+"/api/backups?path=&q=empty", nil)
		return strings.Contains(body, `"folders":[]`)
	}, func() string { return "the removed folder still shows" })
	l, _ = getListing(t, nil, srv.URL+"/api/backups?path=web/", nil)
	if len(l.Backups) != 1 || len(l.Backups[0].SHA256) != 64 {
		t.Errorf("web/: %+v", l)
	}
	l, _ = getListing(t, nil, srv.URL+"/api/backups?path=db&sort=name&order=desc&limit=1", nil)
	if l.Path != "db/" || len(l.Backups) != 1 || l.Backups[0].Name != "pg-2.sql.zst" || l.Next == "" {
		t.Fatalf("db, by name, one: %+v", l)
	}
	l, _ = getListing(t, nil, srv.URL+"/api/backups?path=db/&sort=name&order=desc&limit=1&cursor="+l.Next, nil)
	if len(l.Backups) != 1 || l.Backups[0].Name != "pg-1.sql.zst" || l.Next != "" {
		t.Fatalf("db, second page: %+v", l)
	}
	l, _ = getListing(t, nil, srv.URL+"/api/backups?path=&q=ALP", nil)
	if len(l.Folders) != 0 || len(l.Backups) != 0 {
		t.Errorf("q matches names in this folder only: %+v", l)
	}
	l, _ = getListing(t, nil, srv.URL+"/api/backups?q=WE", nil)
	if len(l.Folders) != 1 || l.Folders[0].Name != "web" {
		t.Errorf("q=WE: %+v", l)
	}
	for _, bad := range []string{"sort=date", "order=up", "limit=0", "limit=x", "cursor=zzz", "limit=1&cursor=" + base64.RawURLEncoding.EncodeToString([]byte("name true false false 0 x")), "q=" + strings.Repeat("x", 201)} {
		res, body := get(t, nil, srv.URL+"/api/backups?path=&"+bad, nil)
		if res.StatusCode != 400 || !strings.Contains(body, `"error"`) {
			t.Errorf("%s: %d %s", bad, res.StatusCode, body)
		}
	}
	// A large limit is lowered, not refused.
	if _, res := getListing(t, nil, srv.URL+"/api/backups?path=&limit=100000", nil); res.StatusCode != 200 {
		t.Errorf("limit=100000: %d", res.StatusCode)
	}
	// Without parameters: as before, the top folder's backups only.
	res, body := get(t, nil, srv.URL+"/api/backups", nil)
	if res.StatusCode != 200 || body != `{"backups":[{"name":"top.tar","size":3,"modified":"2024-05-01T12:00:00Z"}]}`+"\n" {
		t.Errorf("flat: %d %s", res.StatusCode, body)
	}
	// ETag and 304.
	res, _ = get(t, nil, srv.URL+"/api/backups?path=db/", nil)
	etag := res.Header.Get("ETag")
	if res2, _ := get(t, nil, srv.URL+"/api/backups?path=db/", map[string]string{"If-None-Match": etag}); etag == "" || res2.StatusCode != 304 {
		t.Errorf("ETag %q: %d", etag, res2.StatusCode)
	}
}

// TestPagingWithoutScript: following the pages' plain next links visits
// every backup once; the previous links lead back.
func TestPagingWithoutScript(t *testing.T) {
	dir := t.TempDir()
	for i := range 25 {
		writeBackup(t, dir, fmt.Sprintf("b%02d.tar", i), "x", base.Add(time.Duration(i%4)*time.Minute))
	}
	srv := treeServer(t, dir, Options{})
	seen := map[string]int{}
	next, pages := "/?limit=10&sort=name", 0
	var last string
	for next != "" {
		_, page := get(t, nil, srv.URL+next, nil)
		last, next = page, ""
		pages++
		for _, h := range hrefs(page, true) {
			if strings.HasPrefix(h, "/backups/b") {
				seen[h]++
			}
		}
		if m := regexp.MustCompile(`rel="next" href="([^"]+)"`).FindStringSubmatch(page); m != nil {
			next = html.UnescapeString(m[1])
		}
	}
	if pages != 3 || len(seen) != 25 {
		t.Fatalf("%d pages, %d backups", pages, len(seen))
	}
	for h, n := range seen {
		if n != 1 {
			t.Errorf("%s on %d pages", h, n)
		}
	}
	testkit.Holds(t, last, []string{`rel="prev"`, `aria-sort="ascending"`, `order=desc&amp;sort=name`}, []string{`rel="next"`})
	_, page := get(t, nil, srv.URL+"/?q=b1", nil)
	testkit.Holds(t, page, []string{`value="b1"`, `b10.tar`, `b19.tar`}, []string{`b20.tar`, `b09.tar`})
	_, page = get(t, nil, srv.URL+"/?q=nothing", nil)
	testkit.Holds(t, page, []string{`No name here holds “nothing”.`}, nil)
}

// TestStaleFolders: with max_age, a folder whose newest backup is older is
// marked on its page, in its parent's list and in JSON.
func TestStaleFolders(t *testing.T) {
	dir, _ := treeFixture(t)
	now := time.Now()
	os.Chtimes(filepath.Join(dir, "web", "site.tar.zst"), now, now)
	srv := treeServer(t, dir, Options{MaxAge: 24 * time.Hour})
	l, _ := getListing(t, nil, srv.URL+"/api/backups?path=", nil)
	stale := map[string]bool{}
	for _, f := range l.Folders {
		stale[f.Name] = f.Stale
	}
	if !stale["db"] || stale["web"] || l.Stale {
		t.Errorf("top: %+v", l)
	}
	if l, _ := getListing(t, nil, srv.URL+"/api/backups?path=db/", nil); !l.Stale {
		t.Errorf("db/ not stale: %+v", l)
	}
	_, page := get(t, nil, srv.URL+"/backups/db/", nil)
	testkit.Holds(t, page, []string{`id="stale"`, `No new backup here for more than 24h:`, `badge stale`}, nil)
	// web/'s backup is newer than its checksum file: the checksum, not
	// the folder, is stale.
	_, page = get(t, nil, srv.URL+"/backups/web/", nil)
	testkit.Holds(t, page, []string{`badge sum-stale`}, []string{`id="stale"`, `badge stale`})
	l, _ = getListing(t, nil, srv.URL+"/api/backups?path=web/", nil)
	if len(l.Backups) != 1 || !l.Backups[0].SHA256Stale || l.Backups[0].SHA256 == "" {
		t.Errorf("web/: %+v", l.Backups)
	}
}

// TestListingsFollowRules: the contract's example: db/ is for group dba
// only, in the page, the JSON and the counts above it; downloads stay 403.
func TestListingsFollowRules(t *testing.T) {
	dir, _ := treeFixture(t)
	rs := &access.Rules{}
	for i, l := range []string{`GET ^/backups/db/ allow group:dba`, `* ^/backups/db/ deny`, `* ^/backups/web/site deny user:bob`} {
		r, err := access.ParseRule(fmt.Sprintf("rule%d", i+1), l, false)
		must(t, err)
		rs.List = append(rs.List, r)
	}
	groups := &groupTable{groups: map[string][]string{"dana": {"dba"}}}
	srv := treeServer(t, dir, Options{Provider: headerProvider{}, Rules: rs, Groups: groups})
	as := func(user string) map[string]string { return map[string]string{"X-Test-User": user} }

	l, _ := getListing(t, nil, srv.URL+"/api/backups?path=", as("dana"))
	if len(l.Folders) != 4 || !strings.Contains(fmt.Sprint(l.Folders), "{db 2 13") {
		t.Fatalf("dana: %+v", l)
	}
	_, page := get(t, nil, srv.URL+"/", as("dana"))
	testkit.Holds(t, page, []string{`href="/backups/db/"`, "11 backups"}, nil)

	l, _ = getListing(t, nil, srv.URL+"/api/backups?path=", as("bob"))
	for _, f := range l.Folders {
		if f.Name == "db" {
			t.Errorf("bob sees db/: %+v", l)
		}
		if f.Name == "web" && (f.Backups != 0 || f.Size != 0) {
			t.Errorf("bob's web/ counts the backup he may not open: %+v", f)
		}
	}
	_, page = get(t, nil, srv.URL+"/", as("bob"))
	testkit.Holds(t, page, []string{"8 backups", `href="/backups/web/"`}, []string{`href="/backups/db/"`, "11 backups"})
	_, page = get(t, nil, srv.URL+"/backups/web/", as("bob"))
	testkit.Holds(t, page, []string{"This folder holds no backups."}, []string{"site.tar.zst"})
	// The totals remembered for one user are not another's, and a
	// change of groups or of the folders counts at once.
	_, page = get(t, nil, srv.URL+"/", as("dana"))
	testkit.Holds(t, page, []string{"11 backups"}, nil)
	groups.set(map[string][]string{"dana": {"dba"}, "bob": {"dba"}}, false)
	_, page = get(t, nil, srv.URL+"/", as("bob"))
	testkit.Holds(t, page, []string{"10 backups"}, nil)
	writeBackup(t, filepath.Join(dir, "db"), "pg-3.sql.zst", "three", base)
	testkit.WaitUntil(t, 5*time.Second, func() bool {
		_, page := get(t, nil, srv.URL+"/", as("bob"))
		return strings.Contains(page, "11 backups")
	}, func() string { return "the new backup is not counted" })
	groups.set(map[string][]string{"dana": {"dba"}}, false)

	for _, target := range []string{"/backups/db/", "/backups/db/pg-1.sql.zst", "/api/backups?path=db/", "/api/backups?path=db"} {
		if res, _ := get(t, nil, srv.URL+target, as("bob")); res.StatusCode != http.StatusForbidden {
			t.Errorf("bob %s: %d, want 403", target, res.StatusCode)
		}
		if res, _ := get(t, nil, srv.URL+target, as("dana")); res.StatusCode != http.StatusOK {
			t.Errorf("dana %s: %d, want 200", target, res.StatusCode)
		}
	}
}

func TestShortDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{26 * time.Hour: "26h", 90 * time.Minute: "1h30m", 90 * time.Second: "1m30s", 10 * time.Minute: "10m", 45 * time.Second: "45s"} {
		if got := shortDuration(d); got != want {
			t.Errorf("shortDuration(%v) = %q, want %q", d, got, want)
		}
	}
}
