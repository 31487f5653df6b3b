package ui

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/backupweb/backupweb/internal/testkit"
)

// TestBrandIcon: the pages show backupweb's icon by default, the [ui]
// icon in its place, or none (NoIcon: no img in the header bar, no
// favicon link).
func TestBrandIcon(t *testing.T) {
	png := NewIcon([]byte("\x89PNG fake"), "image/png")
	for _, tc := range []struct {
		name     string
		brand    Brand
		want     []string
		dontWant []string
	}{
		{"default", Brand{}, []string{`<img src="/_backupweb/icon.svg?v=`, `<link rel="icon" href="/_backupweb/icon.svg?v=`, `type="image/svg&#43;xml"`}, []string{"brand-icon"}},
		{"own icon", Brand{Product: "Syncthing", Icon: png},
			[]string{`<img src="/_backupweb/brand-icon?v=` + strings.Trim(png.etag, `"`) + `"`, `<link rel="icon" href="/_backupweb/brand-icon?v=`, `type="image/png"`},
			[]string{"icon.svg"}},
		{"none", Brand{Title: "Syncthing", Product: "Syncthing", NoIcon: true}, []string{`<a class="brand" href="/"><span class="brand-name">Syncthing</span></a>`}, []string{"<img", `rel="icon"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := checkPage(t, render(t, http.StatusOK, "login", LoginPage{Brand: tc.brand, Title: "Sign in", Action: "/login", CSRFToken: "c"}), http.StatusOK)
			testkit.Holds(t, body, tc.want, tc.dontWant)
		})
	}
}

// TestBrandIconHandler: BrandIconPath serves the request's Brand's icon,
// cacheable and with its type; without one, or with NoIcon, notFound
// answers.
func TestBrandIconHandler(t *testing.T) {
	notFound := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { http.Error(w, "styled 404", http.StatusNotFound) })
	svg := NewIcon([]byte(`<svg xmlns="http://www.w3.org/2000/svg"/>`), "image/svg+xml")
	for _, tc := range []struct {
		name   string
		brand  Brand
		status int
		body   string
	}{
		{"icon", Brand{Icon: svg}, 200, `<svg xmlns="http://www.w3.org/2000/svg"/>`},
		{"none given", Brand{}, 404, "styled 404\n"},
		{"left out", Brand{Icon: svg, NoIcon: true}, 404, "styled 404\n"},
	} {
		rec := httptest.NewRecorder()
		Branded(tc.brand)(BrandIcon(notFound)).ServeHTTP(rec, httptest.NewRequest("GET", BrandIconPath+"?v=1", nil))
		if rec.Code != tc.status || rec.Body.String() != tc.body {
			t.Errorf("%s: %d %q, want %d %q", tc.name, rec.Code, rec.Body.String(), tc.status, tc.body)
		}
		if tc.status == 200 && (rec.Header().Get("Content-Type") != "image/svg+xml" || rec.Header().Get("ETag") != svg.etag ||
			!strings.Contains(rec.Header().Get("Cache-Control"), "immutable") || rec.Header().Get("X-Content-Type-Options") != "nosniff") {
			t.Errorf("%s: headers %v", tc.name, rec.Header())
		}
	}
}
