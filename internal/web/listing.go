package web

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/backupweb/backupweb/internal/catalog"
)

// encodedList is GET /api/backups's answer for one catalog.Snapshot,
// encoded once and served to every request while the folder is unchanged.
type encodedList struct {
	snap *catalog.Snapshot
	body []byte // the JSON and its newline
	etag string // strong: a digest of body, quoted
	// etagValue is []string{etag}, built once, never modified: setting
	// it costs no allocation.
	etagValue []string
}

// listCache holds the last encodedList.
type listCache struct{ last atomic.Pointer[encodedList] }

// get returns the encoded answer for snap, encoding it only when snap is
// not the one encoded last.
func (c *listCache) get(snap *catalog.Snapshot) (*encodedList, error) {
	if e := c.last.Load(); e != nil && e.snap == snap {
		return e, nil
	}
	out := make([]backupJSON, len(snap.Backups))
	for i, b := range snap.Backups {
		out[i] = backupJSON{Name: b.Name, Size: b.Size, Modified: b.Modified.UTC().Format(time.RFC3339)}
	}
	body, err := json.Marshal(map[string][]backupJSON{"backups": out})
	if err != nil {
		return nil, err
	}
	body = append(body, '\n')
	sum := sha256.Sum256(body)
	etag := `"` + base64.RawURLEncoding.EncodeToString(sum[:18]) + `"`
	e := &encodedList{snap: snap, body: body, etag: etag, etagValue: []string{etag}[:1:1]}
	c.last.Store(e)
	return e, nil
}

// serve writes e, or 304 Not Modified when the request's If-None-Match
// names e's ETag (or "*").
func (e *encodedList) serve(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	apiHeaders(h)
	h["Etag"] = e.etagValue
	if inm := r.Header.Get("If-None-Match"); inm != "" && etagMatches(inm, e.etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h["Content-Type"] = jsonContentType
	w.WriteHeader(http.StatusOK)
	w.Write(e.body)
}

// jsonContentType is shared, never modified: setting it costs no allocation.
var jsonContentType = []string{"application/json"}[:1:1]

// etagMatches reports whether the If-None-Match list inm names etag, by
// the weak comparison RFC 9110 prescribes for If-None-Match (a W/ prefix
// is ignored), or is "*".
func etagMatches(inm, etag string) bool {
	for part := range strings.SplitSeq(inm, ",") {
		part = strings.TrimSpace(part)
		if part == "*" || strings.TrimPrefix(part, "W/") == etag {
			return true
		}
	}
	return false
}
