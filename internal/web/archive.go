package web

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/backupweb/backupweb/internal/access"
	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/catalog"
	"github.com/backupweb/backupweb/internal/refusal"
)

// archiveParam is the query parameter that asks for a folder as one
// archive: GET /backups/PATH/?archive=tar.
const archiveParam = "archive"

// archiveFolder serves GET /backups/PATH/?archive=tar: the folder f as a
// tar stream, written as it is read (no temporary file, no length known
// in advance), of what the user may open below it: each backup the access
// rules and the token's scope let the user download (GET
// /backups/PATH/NAME), opened through the catalog as a download is, in
// folders the rules do not hide. Dot files and dot folders, links,
// special files and checksum files are never in it, since the catalog
// serves none of them. A file that cannot be read once the answer has
// begun cuts the connection, so the client sees a broken archive and never
// a whole-looking one with a piece missing.
func (s *site) archiveFolder(w http.ResponseWriter, r *http.Request, f *catalog.Folder) {
	if kind := r.URL.Query()[archiveParam]; len(kind) != 1 || kind[0] != "tar" {
		s.fail(w, r, refusal.BadArchive)
		return
	}
	may, ok := s.mayOpen(r)
	if !ok {
		s.fail(w, r, refusal.OutOfScope)
		return
	}
	name := f.Name
	if name == "" {
		name = "backups"
	}
	h := w.Header()
	h.Set("Content-Type", "application/x-tar")
	h.Set("Content-Disposition", contentDisposition(name+".tar"))
	h.Set("Cache-Control", "no-store")
	if r.Method == http.MethodHead {
		w.WriteHeader(http.StatusOK)
		return
	}
	dw := &stallWriter{
		ResponseWriter: w,
		rc:             http.NewResponseController(w),
		now:            s.now,
		chunk:          downloadChunk,
		stall:          downloadStall,
	}
	defer dw.finish(r)
	tw := tar.NewWriter(dw)
	if err := s.tarFolder(tw, f, f.Path, may); err != nil {
		s.log.ErrorContext(r.Context(), "web: folder archive cut short", "folder", f.Path, "err", err)
		panic(http.ErrAbortHandler) // the client must not take a cut archive for a whole one
	}
	if err := tw.Close(); err != nil {
		panic(http.ErrAbortHandler)
	}
}

// mayOpen returns the test of whether the request's user may download the
// backup or enter the folder at a path inside the backups folder ("db/x",
// "db/"): the access rules, as listings apply them, and the scope of the
// machine token that admitted the request. False when the token's scope is
// of a kind this layer cannot ask about a path: then nothing is sent.
func (s *site) mayOpen(r *http.Request) (func(string) bool, bool) {
	visible, _ := s.visibility(r)
	var scope *access.Scope
	if u, ok := auth.FromContext(r.Context()); ok && u.Scope != nil {
		sc, ok := u.Scope.(*access.Scope)
		if !ok || sc == nil {
			return nil, false
		}
		scope = sc
	}
	base := access.TargetOf(r)
	return func(p string) bool {
		if visible != nil && !visible(p) {
			return false
		}
		return scope == nil || scope.Allows(base.WithURL(&url.URL{Path: "/backups/" + p}))
	}, true
}

// tarFolder writes f's backups that may admits, by name, and then its
// subfolders, each under its path below top.
func (s *site) tarFolder(tw *tar.Writer, f *catalog.Folder, top string, may func(string) bool) error {
	backups := slices.Clone(f.Backups)
	slices.SortFunc(backups, func(a, b catalog.Backup) int { return strings.Compare(a.Name, b.Name) })
	for _, b := range backups {
		p := f.Path + b.Name
		if !may(p) {
			continue
		}
		if err := s.tarFile(tw, p, strings.TrimPrefix(p, top)); err != nil {
			return err
		}
	}
	for _, sub := range f.Folders {
		if !may(sub.Path) {
			continue
		}
		hdr := &tar.Header{Typeflag: tar.TypeDir, Name: strings.TrimPrefix(sub.Path, top), Mode: 0o755, ModTime: sub.Newest}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if err := s.tarFolder(tw, sub, top, may); err != nil {
			return err
		}
	}
	return nil
}

// tarFile writes the backup at path under name: its length and
// modification time as it is opened, and exactly that many bytes. A
// backup gone since the listing is left out.
func (s *site) tarFile(tw *tar.Writer, path, name string) error {
	file, b, err := s.cat.Open(path)
	if errors.Is(err, catalog.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	defer file.Close()
	hdr := &tar.Header{Typeflag: tar.TypeReg, Name: name, Size: b.Size, Mode: 0o644, ModTime: b.Modified}
	if err := tw.WriteHeader(hdr); err != nil {
		return err
	}
	// A file that shrank while it is read ends early: an error, not a
	// short entry padded out. One that grew is cut at its length.
	if _, err := io.CopyN(tw, file, b.Size); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}
