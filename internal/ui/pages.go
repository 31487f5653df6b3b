package ui

import (
	"html/template"
	"log/slog"
	"net/http"
	"time"

	"github.com/backupweb/backupweb/internal/catalog"
)

// CatalogPage is the data of the "catalog" page: one page of a folder of
// backups (the top folder at /, a folder at /backups/PATH/).
type CatalogPage struct {
	// Brand names the service in the header bar and the document title.
	Brand Brand
	// Title is the page's heading and the document title.
	Title string
	// User is the signed-in user. The page shows "Signed in as" and the
	// name (never the authentication type, which means nothing to a
	// person), a sign-out button (a POST to /logout carrying
	// User.CSRFToken as csrf_token) when User.HasSession, and a notice
	// that authentication is off for type "none".
	User Viewer
	// ConfigFile is the configuration file the program reads, which the
	// notice that authentication is off names; NoConfigFile tells that it
	// is not there (the built-in defaults run), so the notice says how to
	// make one. "": the notice says "the configuration file".
	ConfigFile   string
	NoConfigFile bool
	// Backups are the files to list, in the order given. Each name links
	// to BackupsHref(Path + name); a SHA256 is shown under it.
	Backups []catalog.Backup
	// Path is the folder's path inside the backups folder ("db/"), ""
	// for the top; Href its page's address, escaped ("/backups/db/", "/").
	Path, Href string
	// Crumbs are the links to the folders above this one, top first.
	Crumbs []Link
	// Folders are the subfolders shown first, in the order given.
	Folders []FolderRow
	// Count, Size and Newest are the folder's totals over what the user
	// may see: backups at any depth, their size, the newest's time.
	// Zero Count with Backups set: the page counts Backups itself.
	Count  int
	Size   int64
	Newest time.Time
	// Stale marks a folder whose newest backup is older than MaxAge
	// ([backups] max_age, as Go writes a duration; "" when off).
	Stale  bool
	MaxAge string
	// Shrunk marks a folder whose newest backup is empty or much smaller
	// than those before it ([backups] shrink_ratio, shrink_window).
	Shrunk bool
	// Chart is the history of the folder's own backups (NewChart); nil
	// when it has none.
	Chart *Chart
	// Q is the search text; Sort ("modified", "name", "size") and Order
	// ("asc", "desc") the order shown.
	Q, Sort, Order string
	// Checks are the last verifications of the backups against their
	// recorded SHA-256, by name; a backup without one is not there.
	Checks map[string]*Check
	// Sorts are the column headers' links, by sort name.
	Sorts map[string]SortLink
	// Next and Prev are the addresses of the following and preceding
	// pages, "" when there is none.
	Next, Prev string
}

// FolderRow is a subfolder on a catalog page.
type FolderRow struct {
	Name   string
	Href   string // its page, escaped, with a final slash
	Count  int    // backups at any depth below it
	Size   int64
	Newest time.Time // zero: no backup
	Stale  bool
	Shrunk bool // its own newest backup shrank
}

// Check is the last verification of a backup: Result is "ok",
// "mismatch" or "unreadable", At when it was reached.
type Check struct {
	Result string
	At     time.Time
}

// SortLink is a column header's link: Href sorts by the column, in the
// other direction when it is the Current one (Ascending tells which way
// it is sorted now).
type SortLink struct {
	Href      string
	Current   bool
	Ascending bool
}

// Total is the number of backups the summary line states.
func (p CatalogPage) Total() int {
	if p.Count == 0 {
		return len(p.Backups)
	}
	return p.Count
}

// Viewer is who a page is shown to, as plain view data: the page package
// knows nothing of how users are authenticated.
type Viewer struct {
	// Name is the user name ("anonymous" for type none).
	Name string
	// Type is the authentication type ("none", "basic", "flask-login",
	// "oauth").
	Type string
	// HasSession tells whether the user holds a session that a logout
	// button can end; CSRFToken is then the token that button posts.
	HasSession bool
	CSRFToken  string
	// Links are pages of the user's own account (passkeys), shown beside
	// the name.
	Links []Link
}

// Link is a link of a page: its text and its local path.
type Link struct {
	Label string
	Path  string
}

// TotalSize returns the folder's size (Size), or when Count is zero the
// sum of the backups' sizes, shown above the table.
func (p CatalogPage) TotalSize() int64 {
	if p.Count > 0 {
		return p.Size
	}
	var n int64
	for _, b := range p.Backups {
		n += b.Size
	}
	return n
}

// LoginPage is the data of the "login" page, and the data an operator's
// replacement login template receives (see ParseLoginTemplate). Every field
// is plain text; the template escapes it.
//
// A replacement template must post a form to Action with the fields
// username, password, csrf_token (hidden, value CSRFToken) and next (hidden,
// value Next). The pages are served with a Content-Security-Policy that
// allows stylesheets from /_backupweb/ only and no scripts: inline <style>
// elements, style attributes and <script> are ignored by browsers.
type LoginPage struct {
	// Brand names the service in the header bar and the document title.
	Brand Brand
	// Title is the page's heading and the document title.
	Title string
	// Action is the path the form posts to: the login page's own path.
	Action string
	// CSRFToken is the value of the hidden csrf_token field.
	CSRFToken string
	// Next is the value of the hidden next field: where to go after login.
	Next string
	// Username pre-fills the username field after a failed attempt.
	Username string
	// Error is the message shown above the form; empty shows none.
	Error string
	// Notice is an informational sentence shown above the form, such as
	// "You have been signed out."; empty shows none.
	Notice string
	// Passkey, when its BeginURL is set, is the "Sign in with a passkey"
	// button ([authentication] passkey_login); the page then loads the
	// passkey script and is served with ScriptPolicy.
	Passkey PasskeyButton
}

// ErrorPage is the data of the "error" page shown for failed page requests
// (404, 403, 500...). API routes answer with JSON instead.
type ErrorPage struct {
	// Brand names the service, and the link back to what it guards
	// ("Back to Syncthing").
	Brand Brand
	// Status is the HTTP status code, shown on the page.
	Status int
	// Title is the heading; empty means the status's standard text.
	Title string
	// Message is one sentence for a person; never internal detail.
	Message string
	// SignIn, when set, is the URL of a "Sign in again" link (the
	// signed-out page).
	SignIn string
}

// LogoutPage is the data of the "logout" page at GET /logout: the
// confirmation a guarded application can link to, with the one sign-out
// form (a POST to /logout carrying CSRFToken and Next). Without a signed-in
// user it says so and offers SignIn.
type LogoutPage struct {
	// Brand names the service, and the link back to what it guards.
	Brand Brand
	// User is the signed-in user's name; empty when no one is signed in.
	User string
	// CSRFToken is the session's token the form posts as csrf_token.
	CSRFToken string
	// Next is where the browser goes after signing out (the hidden next
	// field), already checked by the caller; empty: the signed-out page.
	Next string
	// SignIn is the URL of the sign-in page, offered when no one is
	// signed in.
	SignIn string
}

// LogoutButton returns the form that signs the user out: a POST to
// /logout carrying the session's CSRF token (auth.User.CSRFToken) in the
// csrf_token field, with one button. A host application that shows pages
// of its own to users of a session type puts it in them; the built-in
// pages show the same form.
func LogoutButton(csrfToken string) template.HTML {
	return template.HTML(`<form method="post" action="/logout" class="logout">` +
		`<input type="hidden" name="csrf_token" value="` + template.HTMLEscapeString(csrfToken) + `">` +
		`<button type="submit">Sign out</button></form>`)
}

// ErrorWriter returns the function that shows a refusal to a person: the
// "error" page with the request's Brand, the status, title (empty: the
// status's text) and sentence. It is the Page of the program's error
// writer (refusal.Errors); a page that cannot be rendered is logged to log.
func ErrorWriter(log *slog.Logger) func(w http.ResponseWriter, r *http.Request, status int, title, message string) {
	return func(w http.ResponseWriter, r *http.Request, status int, title, message string) {
		if err := Render(w, status, "error", ErrorPage{Brand: BrandOf(r.Context()), Status: status, Title: title, Message: message}); err != nil {
			log.ErrorContext(r.Context(), "ui: rendering the error page", "err", err)
		}
	}
}
