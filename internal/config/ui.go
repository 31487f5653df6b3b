package config

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/backupweb/backupweb/internal/fspath"
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
	// Icon is [ui] icon: the path of an SVG or PNG file the pages show in
	// their header bar and as the favicon in place of backupweb's icon,
	// or "none" to show no icon. Default (""): backupweb's icon, or none
	// when ProductName is set (a page in front of another application
	// does not carry backupweb's icon).
	Icon string
	// IconFile is the file Icon names, read; nil when Icon is "" or
	// "none", or the file cannot be used (an error at icon).
	IconFile *IconFile
}

// IconFile is an icon file read for [ui] icon.
type IconFile struct {
	// Body is the file's content, at most MaxIconSize bytes.
	Body []byte
	// Type is its media type, from its extension: "image/svg+xml" for
	// .svg, "image/png" for .png.
	Type string
}

// NoIcon is the [ui] icon value that shows no icon.
const NoIcon = "none"

// MaxIconSize is the largest [ui] icon file accepted, in bytes: an icon
// for a header bar and a browser tab, not a picture.
const MaxIconSize = 64 << 10

// iconTypes are the media types of the icon files accepted, by extension.
var iconTypes = map[string]string{".svg": "image/svg+xml", ".png": "image/png"}

// maxUIText bounds [ui] values: a name for a header bar, not a paragraph.
const maxUIText = 80

var uiKeys = []string{"title", "product_name", "icon"}

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
	u.Icon = strings.TrimSpace(s.String("icon", ""))
	if u.Icon != "" && u.Icon != NoIcon {
		u.IconFile = readIcon(s, u.Icon)
	}
	return u
}

// readIcon reads the [ui] icon file at path: an SVG or PNG file (by its
// extension) of at most MaxIconSize bytes. A file that cannot be used is
// an error at icon, and nil.
func readIcon(s *ini.Section, path string) *IconFile {
	typ, ok := iconTypes[strings.ToLower(filepath.Ext(path))]
	if !ok {
		s.Errorf("icon", "%s is neither .svg nor .png; name an SVG or PNG file, or write none for no icon", fspath.Show(path))
		return nil
	}
	f, err := os.Open(path)
	if err != nil {
		s.Errorf("icon", "cannot read %s: %v", fspath.Show(path), fspath.Cause(err))
		return nil
	}
	defer f.Close()
	if info, err := f.Stat(); err == nil && info.IsDir() {
		s.Errorf("icon", "%s is a directory; name an SVG or PNG file", fspath.Show(path))
		return nil
	}
	body, err := io.ReadAll(io.LimitReader(f, MaxIconSize+1))
	switch {
	case err != nil:
		s.Errorf("icon", "cannot read %s: %v", fspath.Show(path), fspath.Cause(err))
		return nil
	case len(body) > MaxIconSize:
		s.Errorf("icon", "%s is larger than %d KiB; an icon for a header bar fits in less", fspath.Show(path), MaxIconSize>>10)
		return nil
	case len(body) == 0:
		s.Errorf("icon", "%s is empty", fspath.Show(path))
		return nil
	}
	return &IconFile{Body: body, Type: typ}
}
