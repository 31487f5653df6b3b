package ui

import (
	"context"
	"net/http"
)

// DefaultTitle is the name pages carry in their header bar and document
// title when [ui] title is not set.
const DefaultTitle = "backupweb"

// Brand is what the pages call the service and what it guards, from the
// [ui] section: in front of another application the pages name that
// application ("Back to Syncthing") rather than backups. The zero value is
// backupweb's own wording.
type Brand struct {
	// Title is the name in every page's header bar and after the page's
	// own title in the document title ("Sign in · Syncthing"). Empty:
	// DefaultTitle.
	Title string
	// Product is what a person goes back to from a sign-in or error page
	// ("Back to Syncthing"), and what a stale form asks them to reload.
	// Empty: "the backups", backupweb's own catalog.
	Product string
	// Icon, when set, is shown in the header bar and as the favicon in
	// place of backupweb's icon ([ui] icon).
	Icon *Icon
	// NoIcon leaves the icon out ([ui] icon = none, or a product_name
	// without an icon: a sign-in page in front of another application
	// does not carry backupweb's icon).
	NoIcon bool
}

// Name returns the title pages carry: Title, or DefaultTitle.
func (b Brand) Name() string {
	if b.Title == "" {
		return DefaultTitle
	}
	return b.Title
}

// ProductName returns what the service guards, for a sentence: Product,
// or "the backups".
func (b Brand) ProductName() string {
	if b.Product == "" {
		return "the backups"
	}
	return b.Product
}

// BackLabel is the text of the link back to the guarded application (or
// the catalog): "Back to " and ProductName.
func (b Brand) BackLabel() string { return "Back to " + b.ProductName() }

type brandKey struct{}

// BrandContextKey is the context key under which WithBrand stores the
// Brand. It is exported, like http.ServerContextKey, so that one context
// can answer for several packages' values at once (package web's
// per-request context).
var BrandContextKey any = brandKey{}

// WithBrand returns ctx carrying b, for the pages rendered while serving a
// request (see BrandOf).
func WithBrand(ctx context.Context, b Brand) context.Context {
	return context.WithValue(ctx, brandKey{}, b)
}

// BrandOf returns the Brand ctx carries, or the zero Brand (backupweb's own
// wording). Handlers pass BrandOf(r.Context()) in a page's Brand field.
func BrandOf(ctx context.Context) Brand {
	b, _ := ctx.Value(brandKey{}).(Brand)
	return b
}

// Branded is middleware that puts b in every request's context, so every
// page and refusal rendered below it names the same service.
func Branded(b Brand) func(http.Handler) http.Handler {
	with := BrandContext(b)
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			next.ServeHTTP(w, r.WithContext(with(r.Context())))
		})
	}
}

// BrandContext returns WithBrand for b alone, with b boxed once rather
// than at every call: for middleware that puts the same Brand in every
// request's context.
func BrandContext(b Brand) func(context.Context) context.Context {
	var v any = b
	return func(ctx context.Context) context.Context {
		return context.WithValue(ctx, brandKey{}, v)
	}
}
