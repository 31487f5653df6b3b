package ui

import (
	"bytes"
	"embed"
	"maps"
	"mime"
	"net/http"
	"path"
	"slices"
	"strings"
	"sync"
	"time"
)

//go:embed static
var staticFS embed.FS

// asset is one embedded static file, read once.
type asset struct {
	body        []byte
	contentType string
	etag        string
}

// assets maps a file's name under /_backupweb/ to its content. Only the files
// directly in the embedded static folder are served; there is no directory
// listing.
var assets = sync.OnceValue(func() map[string]asset {
	m := make(map[string]asset)
	entries, err := staticFS.ReadDir("static")
	if err != nil {
		return m
	}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		b, err := staticFS.ReadFile("static/" + e.Name())
		if err != nil {
			continue
		}
		ct := mime.TypeByExtension(path.Ext(e.Name()))
		if ct == "" {
			ct = "application/octet-stream"
		}
		m[e.Name()] = asset{body: b, contentType: ct, etag: `"` + contentHash(b) + `"`}
	}
	return m
})

// staticURL returns the URL of the named static file with its content hash
// as a query ("/_backupweb/style.css?v=1a2b..."), so a new release's stylesheet
// is fetched at once despite the long caching Static asks for.
func staticURL(name string) string {
	a, ok := assets()[name]
	if !ok {
		return "/_backupweb/" + name
	}
	return "/_backupweb/" + name + "?v=" + strings.Trim(a.etag, `"`)
}

// Static returns the handler for the paths under /_backupweb/: the stylesheet
// and the icon. Responses may be cached for a year (pages link them with a
// content-hash query, see staticURL), carry an ETag and
// X-Content-Type-Options: nosniff. Anything else under /_backupweb/ is 404;
// methods other than GET and HEAD are 405. It is meant to be mounted
// unprotected: the login page needs the stylesheet before anyone has logged
// in, and nothing under /_backupweb/ is private.
func Static() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "405 method not allowed", http.StatusMethodNotAllowed)
			return
		}
		name, ok := strings.CutPrefix(r.URL.Path, "/_backupweb/")
		a, found := assets()[name]
		if !ok || !found {
			http.NotFound(w, r)
			return
		}
		h := w.Header()
		h.Set("Content-Type", a.contentType)
		h.Set("Cache-Control", "public, max-age=31536000, immutable")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("ETag", a.etag)
		http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(a.body))
	})
}

// IsStatic reports whether p is the path of one of Static's files
// (/_backupweb/style.css, ...) or the brand icon: public files every
// page links, served to anyone.
func IsStatic(p string) bool {
	if p == BrandIconPath {
		return true
	}
	name, ok := strings.CutPrefix(p, "/_backupweb/")
	_, found := assets()[name]
	return ok && found
}

// Mount serves Static's files on mux, each at its own path
// (GET /_backupweb/style.css, ...), unless mux serves them already: the web
// layer and every type with pages of its own (the login page, the OAuth
// pages) call it, so a session type mounted in a host application brings
// its stylesheet along, and mounting twice is harmless. Any other path
// under /_backupweb/ matches no route here, so the mux's owner answers it
// as every unknown path (the web layer: the styled page or JSON).
func Mount(mux *http.ServeMux) {
	static := Static()
	for _, name := range slices.Sorted(maps.Keys(assets())) {
		pattern := "GET /_backupweb/" + name
		probe, _ := http.NewRequest(http.MethodGet, "/_backupweb/"+name, nil)
		if _, got := mux.Handler(probe); got == pattern {
			continue
		}
		mux.Handle(pattern, static)
	}
}
