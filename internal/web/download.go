package web

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/backupweb/backupweb/internal/catalog"
	"github.com/backupweb/backupweb/internal/refusal"
)

// A download may last as long as it keeps moving: each piece of at most
// downloadChunk bytes must reach the client within downloadStall, or the
// connection is cut. That is a floor of about 17 KiB/s, so a stalled or
// deliberately slow reader cannot hold a connection and an open file for
// ever, while a multi-gigabyte backup on a slow link still completes. The
// server's WriteTimeout (see NewServer) bounds every other response.
const (
	downloadChunk = 1 << 20
	downloadStall = time.Minute
)

// download serves GET and HEAD /backups/PATH for a file: the file with
// http.ServeContent, so ranges (resuming) and conditional requests on its
// ETag (catalog.Backup.Version: size, times and inode, which any rewrite
// changes) work, as an attachment of type application/octet-stream, with
// Repr-Digest (RFC 9530) when a checksum file gives its SHA-256 and is not
// older than the file by its modification or change time (else
// Backupweb-Checksum: stale). Anything
// catalog.Open refuses is 404.
func (s *site) download(w http.ResponseWriter, r *http.Request, name string) {
	if s.cat == nil {
		s.log.ErrorContext(r.Context(), "web: open backup", "err", errNoCatalog)
		s.fail(w, r, refusal.ReadFailed)
		return
	}
	f, b, err := s.cat.Open(name)
	if errors.Is(err, catalog.ErrNotFound) {
		s.fail(w, r, refusal.NoBackup)
		return
	}
	if err != nil {
		s.log.ErrorContext(r.Context(), "web: open backup", "name", name, "err", err)
		s.fail(w, r, refusal.ReadFailed)
		return
	}
	defer f.Close()

	h := w.Header()
	h.Set("Content-Type", "application/octet-stream")
	h.Set("Content-Disposition", contentDisposition(b.Name))
	h.Set("Etag", `"`+b.Version()+`"`)
	switch {
	case b.SHA256 != "" && b.SumStale:
		h.Set(checksumHeader, "stale")
	case b.SHA256 != "":
		if d := reprDigest(b.SHA256); d != "" {
			h.Set("Repr-Digest", d)
		}
	}
	// Last-Modified is the later of the modification and status change
	// times, so setting the modification time back never shows an older
	// date for new bytes. It is still never taken as proof that the bytes
	// are unchanged: it counts whole seconds. ServeContent gets no time,
	// so If-Modified-Since never answers 304 and a date in If-Range sends
	// the whole file; the ETag is the validator.
	h.Set("Last-Modified", b.LastChanged().UTC().Format(http.TimeFormat))
	dw := &stallWriter{
		ResponseWriter: w,
		rc:             http.NewResponseController(w),
		now:            s.now,
		chunk:          downloadChunk,
		stall:          downloadStall,
	}
	defer dw.finish(r)
	http.ServeContent(dw, r, b.Name, time.Time{}, f)
}

// checksumHeader tells, on a download whose checksum file is older than
// the file, that the recorded SHA-256 may not be the file's: "stale". No
// Repr-Digest is sent then.
const checksumHeader = "Backupweb-Checksum"

// stallWriter moves the connection's write deadline forward before each
// piece of a download, so only a stalled transfer times out. Its ReadFrom
// hands the underlying writer *io.LimitedReader pieces of the very reader it
// got, so net/http still sends a file with sendfile.
type stallWriter struct {
	http.ResponseWriter
	rc    *http.ResponseController
	now   func() time.Time
	chunk int64
	stall time.Duration
}

func (d *stallWriter) extend() {
	// ErrNotSupported (a writer without deadlines, as in tests) leaves
	// the transfer unbounded, which is all that can be done.
	d.rc.SetWriteDeadline(d.now().Add(d.stall))
}

// finish leaves the connection's write deadline as the server's own rules
// would: a server without WriteTimeout gets none back; otherwise the final
// flush gets one more period and the server sets a new deadline for the
// connection's next request.
func (d *stallWriter) finish(r *http.Request) {
	if srv, ok := r.Context().Value(http.ServerContextKey).(*http.Server); ok && srv.WriteTimeout > 0 {
		d.extend()
		return
	}
	d.rc.SetWriteDeadline(time.Time{})
}

func (d *stallWriter) Write(p []byte) (int, error) {
	var n int
	for len(p) > 0 {
		piece := p[:min(int64(len(p)), d.chunk)]
		d.extend()
		m, err := d.ResponseWriter.Write(piece)
		n += m
		if err != nil {
			return n, err
		}
		p = p[len(piece):]
	}
	return n, nil
}

func (d *stallWriter) ReadFrom(src io.Reader) (int64, error) {
	var total int64
	for {
		var piece *io.LimitedReader
		if lr, ok := src.(*io.LimitedReader); ok {
			if lr.N <= 0 {
				return total, nil
			}
			piece = &io.LimitedReader{R: lr.R, N: min(lr.N, d.chunk)}
		} else {
			piece = &io.LimitedReader{R: src, N: d.chunk}
		}
		want := piece.N
		d.extend()
		n, err := io.Copy(d.ResponseWriter, piece)
		total += n
		if lr, ok := src.(*io.LimitedReader); ok {
			lr.N -= n
		}
		if err != nil || n < want {
			return total, err
		}
	}
}

func (d *stallWriter) Unwrap() http.ResponseWriter { return d.ResponseWriter }

// contentDisposition returns the header value that makes browsers save the
// file under its own name (RFC 6266). The quoted filename is the name with
// everything outside printable ASCII, and '"', '\\' and '%', replaced by
// '_', which every client reads alike; when that changed the name,
// filename* (RFC 8187, formerly 5987) carries the exact UTF-8 name,
// percent-encoded, for clients that know it. Control characters (a newline
// in a file name) become '_' in both, so the header cannot be split.
func contentDisposition(name string) string {
	name = strings.ToValidUTF8(name, "_")
	var plain, exact strings.Builder
	changed := false
	for _, r := range name {
		switch {
		case r < 0x20 || r == 0x7f:
			plain.WriteByte('_')
			exact.WriteByte('_')
			changed = true
		case r > 0x7e || r == '"' || r == '\\' || r == '%':
			plain.WriteByte('_')
			exact.WriteRune(r)
			changed = true
		default:
			plain.WriteRune(r)
			exact.WriteRune(r)
		}
	}
	v := `attachment; filename="` + plain.String() + `"`
	if changed {
		v += "; filename*=UTF-8''" + encodeExtValue(exact.String())
	}
	return v
}

// encodeExtValue percent-encodes s for an RFC 8187 ext-value: every byte
// that is not an attr-char.
func encodeExtValue(s string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if isAttrChar(c) {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&0xf])
	}
	return b.String()
}

func isAttrChar(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return c < utf8.RuneSelf && strings.IndexByte("!#$&+-.^_`|~", c) >= 0
}
