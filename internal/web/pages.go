package web

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/catalog"
	"github.com/backupweb/backupweb/internal/refusal"
	"github.com/backupweb/backupweb/internal/ui"
)

// errNoCatalog is logged when Options.Catalog was nil.
var errNoCatalog = errors.New("web: no catalog configured")

// site holds what the handlers share.
type site struct {
	cat  *catalog.Catalog
	log  *slog.Logger
	errs *refusal.Errors
	now  func() time.Time
	// lists is /api/backups's encoded answer, kept while the folder is
	// unchanged.
	lists listCache
	// links are the pages of the user's own account the provider serves;
	// nil when it serves none.
	links func(auth.User) []auth.AccountLink
	// guard is the access rules, which listings follow too.
	guard *guard
	// maxAge is [backups] max_age: a folder whose newest backup is older
	// is stale. Zero: never.
	maxAge time.Duration
	// shrink is [backups] shrink_ratio and shrink_window: a folder whose
	// newest backup shrank is marked.
	shrink catalog.Shrink
	// configFile and configMissing are Options.ConfigFile and
	// ConfigMissing, for the notice that authentication is off.
	configFile    string
	configMissing bool
}

// viewer turns the admitted user into the page's plain view data. The CSRF
// token is computed only for a user with a session, who gets a logout
// button.
func (s *site) viewer(u auth.User) ui.Viewer {
	v := ui.Viewer{Name: u.Name, Type: u.Type, HasSession: u.HasSession()}
	if s.links != nil {
		for _, l := range s.links(u) {
			v.Links = append(v.Links, ui.Link{Label: l.Label, Path: l.Path})
		}
	}
	if v.HasSession {
		v.CSRFToken = u.CSRFToken()
	}
	return v
}

// backupJSON is one entry of GET /api/backups.
type backupJSON struct {
	Name     string `json:"name"`
	Size     int64  `json:"size"`
	Modified string `json:"modified"`
}

// apiBackups serves GET /api/backups: {"backups": [...]}, the backups
// directly inside the folder, newest first, "modified" in RFC 3339, UTC,
// whole seconds. An empty folder gives an empty array, never null. With
// any of the listing parameters (path, q, sort, order, limit, cursor) it
// answers one page of a folder instead (see apiFolder).
//
// The answer is encoded once per listing of the folder (see listCache) and
// carries a strong ETag; a request whose If-None-Match names it gets 304.
func (s *site) apiBackups(w http.ResponseWriter, r *http.Request) {
	if hasListingParams(r) {
		s.apiFolder(w, r)
		return
	}
	if s.cat == nil {
		s.log.ErrorContext(r.Context(), "web: list backups", "err", errNoCatalog)
		s.fail(w, r, refusal.ListFailed)
		return
	}
	snap, err := s.cat.Snapshot()
	if err != nil {
		s.log.ErrorContext(r.Context(), "web: list backups", "err", err)
		s.fail(w, r, refusal.ListFailed)
		return
	}
	enc, err := s.lists.get(snap)
	if err != nil {
		s.log.ErrorContext(r.Context(), "web: encode json", "path", r.URL.Path, "err", err)
		s.fail(w, r, refusal.EncodeFailed)
		return
	}
	enc.serve(w, r)
}

// apiMe serves GET /api/me: the current-user record (username, auth_type,
// and the attributes the provider knows). The CSRF token is not part of it.
func (s *site) apiMe(w http.ResponseWriter, r *http.Request) {
	u, _ := auth.FromContext(r.Context())
	s.writeJSON(w, r, u.Record())
}

func (s *site) writeJSON(w http.ResponseWriter, r *http.Request, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		s.log.ErrorContext(r.Context(), "web: encode json", "path", r.URL.Path, "err", err)
		s.fail(w, r, refusal.EncodeFailed)
		return
	}
	h := w.Header()
	apiHeaders(h)
	h["Content-Type"] = jsonContentType
	w.WriteHeader(http.StatusOK)
	w.Write(append(b, '\n'))
}

// fail answers an error through the program's error writer: JSON
// {"error": message} for API clients, the "error" page everywhere else.
func (s *site) fail(w http.ResponseWriter, r *http.Request, f refusal.Refusal) {
	s.errs.Refuse(w, r, f)
}
