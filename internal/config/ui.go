package config

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/backupweb/backupweb/internal/ini"
)

// UI is the [ui] section: what the pages call the service and what it
// guards, so that in front of another application they name that
// application ("Back to Syncthing") rather than backups.
type UI struct {
	// Title is the name in every page's header bar and document title,
	// [ui] title. Default: ProductName when set, else "backupweb".
	Title string
	// ProductName is what the pages send people back to ("Back to
	// Syncthing"), [ui] product_name. Default: "the backups" in catalog
	// mode, "the application" in proxy mode.
	ProductName string
}

// maxUIText bounds [ui] values: a name for a header bar, not a paragraph.
const maxUIText = 80

var uiKeys = []string{"title", "product_name"}

// loadUI reads [ui]. A value with control characters, or longer than 80
// characters, is an error at its key: it would break the page's layout or
// its title, and an empty value after trimming is the default.
func loadUI(s *ini.Section) UI {
	warnUnknown(s, uiKeys)
	u := UI{
		Title:       strings.TrimSpace(s.String("title", "")),
		ProductName: strings.TrimSpace(s.String("product_name", "")),
	}
	for key, v := range map[string]*string{"title": &u.Title, "product_name": &u.ProductName} {
		switch {
		case !utf8.ValidString(*v) || strings.ContainsFunc(*v, unicode.IsControl):
			s.Errorf(key, "holds control characters or bytes that are not UTF-8; write the name as plain text")
			*v = ""
		case utf8.RuneCountInString(*v) > maxUIText:
			s.Errorf(key, "is longer than %d characters; a short name fits the page's header bar", maxUIText)
			*v = ""
		}
	}
	return u
}
