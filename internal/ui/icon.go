package ui

import (
	"bytes"
	"net/http"
	"time"
)

// BrandIconPath is where the icon of [ui] icon is served, with its
// content hash as a query (see Brand.IconURL).
const BrandIconPath = "/_backupweb/brand-icon"

// Icon is an image the pages show in the header bar and as the favicon in
// place of backupweb's own ([ui] icon).
type Icon struct {
	body        []byte
	contentType string
	etag        string
}

// NewIcon returns the icon of body, whose type is contentType
// ("image/svg+xml" or "image/png"). It does not check the image: the
// configuration does (the file's size and extension).
func NewIcon(body []byte, contentType string) *Icon {
	return &Icon{body: body, contentType: contentType, etag: `"` + contentHash(body) + `"`}
}

// IconURL returns the address of the icon the pages show: "" for none
// (NoIcon), the Icon's at BrandIconPath, or backupweb's own.
func (b Brand) IconURL() string {
	switch {
	case b.NoIcon:
		return ""
	case b.Icon != nil:
		return BrandIconPath + "?v=" + b.Icon.etag[1:len(b.Icon.etag)-1]
	}
	return staticURL("icon.svg")
}

// IconType returns the media type of the icon IconURL names.
func (b Brand) IconType() string {
	if b.Icon != nil {
		return b.Icon.contentType
	}
	return "image/svg+xml"
}

// BrandIcon returns the handler of GET BrandIconPath: the Icon of the
// request's Brand (see BrandOf), cached as Static's files are; notFound
// answers when the Brand has none or shows none.
func BrandIcon(notFound http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b := BrandOf(r.Context())
		if b.Icon == nil || b.IconURL() == "" {
			notFound.ServeHTTP(w, r)
			return
		}
		h := w.Header()
		h.Set("Content-Type", b.Icon.contentType)
		h.Set("Cache-Control", "public, max-age=31536000, immutable")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("ETag", b.Icon.etag)
		http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(b.Icon.body))
	})
}
