// Package ui is the look of backupweb's pages: html/template files and one
// stylesheet, embedded in the program, so the service needs no files besides
// its configuration and nothing is fetched from other sites.
//
// Every page is the shared layout plus one page template, executed with one
// of the page data types (CatalogPage, LoginPage, ErrorPage, LogoutPage),
// whose Brand names the service (see Brand, [ui] title and product_name).
// The wording is the same everywhere: "Sign in", "Sign out", "Signed in
// as". The pages need
// no JavaScript, fit a phone's screen, follow the system's light or dark
// preference, and label every control for assistive technology.
//
// The package renders; it does not decide. Which page to show, with what
// status, and whether a route is protected is the web package's business.
package ui

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

//go:embed templates/*.html
var templateFS embed.FS

// pages are the page templates, each executed inside templates/layout.html.
var pages = []string{"catalog", "login", "error", "logout", "secondfactor", "enrol", "passkeys", "reauth", "account"}

// parsed holds one template set per page, parsed once, on first use.
var parsed = sync.OnceValues(func() (map[string]*template.Template, error) {
	sets := make(map[string]*template.Template, len(pages))
	for _, p := range pages {
		t, err := template.New(p).Funcs(funcs).ParseFS(templateFS,
			"templates/layout.html", "templates/"+p+".html")
		if err != nil {
			return nil, fmt.Errorf("ui: parse page %s: %w", p, err)
		}
		sets[p] = t
	}
	return sets, nil
})

// funcs are the functions templates may call, ours and operators' alike.
var funcs = template.FuncMap{
	// humanSize formats a byte count with binary units: "1.5 GiB".
	"humanSize": HumanSize,
	// rfc3339 formats a time in UTC for a <time datetime> attribute.
	"rfc3339": func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
	// displayTime formats a time in UTC for people.
	"displayTime": func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05") + " UTC" },
	// logoutButton is LogoutButton: the one logout form.
	"logoutButton": LogoutButton,
	// backupHref is the address of the backup name in the folder
	// folder ("" for the top, else with a final slash): BackupsHref.
	"backupHref": func(folder, name string) string { return BackupsHref(folder + name) },
	// static returns the cache-busting URL of a file under /_backupweb/.
	"static": staticURL,
	// statusText is the standard text of an HTTP status.
	"statusText": http.StatusText,
	// sortHead is the data of one sortable column header.
	"sortHead": func(p CatalogPage, by, label, class string) sortHead {
		return sortHead{Sorts: p.Sorts, By: by, Label: label, Class: class}
	},
}

// BackupsHref is the one address of rel, a slash-separated path inside
// the backups folder: "/" for the top folder (""), else "/backups/" and
// each element of rel escaped as one path segment, so that a name holding
// ':', '?', '#', '%', ';', a space or any other byte is one segment of an
// absolute path and never reads as a scheme, a query or a fragment. A
// folder's path ends in a slash and so does its address. Every link the
// pages make to a folder or a backup is built here.
func BackupsHref(rel string) string {
	if rel == "" {
		return "/"
	}
	parts := strings.Split(rel, "/")
	for i, e := range parts {
		parts[i] = url.PathEscape(e)
	}
	return "/backups/" + strings.Join(parts, "/")
}

// sortHead is the data of the "sorthead" template.
type sortHead struct {
	Sorts            map[string]SortLink
	By, Label, Class string
}

// HumanSize formats n bytes for people with binary (IEC) units and one
// decimal: "512 B", "1.5 KiB", "3.0 GiB". The exact count stays available
// to the page in a data element.
func HumanSize(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 5; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// Render writes the named page ("catalog", "login", "error", "logout") with data and
// status. The page is executed into memory first, so a template error never
// leaves a half-written page: it is answered with a bare 500 and returned,
// for the caller to log with its logger.
// Render sets Content-Type, and Cache-Control: no-store unless the caller set
// a Cache-Control already, since pages carry per-user data and CSRF tokens.
func Render(w http.ResponseWriter, status int, page string, data any) error {
	sets, err := parsed()
	if err != nil {
		return fail(w, err)
	}
	t, ok := sets[page]
	if !ok {
		return fail(w, fmt.Errorf("ui: no page named %q", page))
	}
	return write(w, status, func(b *bytes.Buffer) error { return t.ExecuteTemplate(b, "layout", data) })
}

// RenderWith is Render for a template of the caller's own, such as the one
// ParseLoginTemplate returns: t itself is executed with data.
func RenderWith(w http.ResponseWriter, status int, t *template.Template, data any) error {
	if t == nil {
		return fail(w, fmt.Errorf("ui: no template given"))
	}
	return write(w, status, func(b *bytes.Buffer) error { return t.Execute(b, data) })
}

// ParseLoginTemplate parses an operator's login page from the file at path.
// The file stands alone: it cannot {{template}} any of ours, and it is
// executed with a LoginPage. It may call the functions our templates
// use, among them {{static "style.css"}} for the URL of the built-in
// stylesheet. A file that does not parse is an error naming the file and
// line, meant for check-config and start-up, not for request time.
func ParseLoginTemplate(path string) (*template.Template, error) {
	t, err := template.New(filepath.Base(path)).Funcs(funcs).ParseFiles(path)
	if err != nil {
		return nil, fmt.Errorf("ui: login template: %w", err)
	}
	return t, nil
}

func write(w http.ResponseWriter, status int, exec func(*bytes.Buffer) error) error {
	var b bytes.Buffer
	if err := exec(&b); err != nil {
		return fail(w, fmt.Errorf("ui: render: %w", err))
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	if h.Get("Cache-Control") == "" {
		h.Set("Cache-Control", "no-store")
	}
	w.WriteHeader(status)
	w.Write(b.Bytes())
	return nil
}

// fail answers a page that could not be rendered with a bare 500 and
// returns err.
func fail(w http.ResponseWriter, err error) error {
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	http.Error(w, "500 internal server error", http.StatusInternalServerError)
	return err
}

// contentHash returns a short hex digest of b, used as ETag and as the
// version in static URLs.
func contentHash(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}
