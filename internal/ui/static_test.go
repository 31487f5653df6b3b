package ui

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestStatic(t *testing.T) {
	h := Static()
	etag := assets()["style.css"].etag
	tests := []struct {
		name, method, path string
		header             map[string]string
		status             int
		contentType        string
	}{
		{"stylesheet", "GET", "/_backupweb/style.css", nil, 200, "text/css; charset=utf-8"},
		{"versioned", "GET", "/_backupweb/style.css?v=abc", nil, 200, "text/css; charset=utf-8"},
		{"icon", "GET", "/_backupweb/icon.svg", nil, 200, "image/svg+xml"},
		{"head", "HEAD", "/_backupweb/style.css", nil, 200, "text/css; charset=utf-8"},
		{"revalidate", "GET", "/_backupweb/style.css", map[string]string{"If-None-Match": etag}, 304, ""},
		{"folder", "GET", "/_backupweb/", nil, 404, ""},
		{"missing", "GET", "/_backupweb/nope.css", nil, 404, ""},
		{"nested", "GET", "/_backupweb/static/style.css", nil, 404, ""},
		{"outside", "GET", "/_backupweb/../ui.go", nil, 404, ""},
		{"post", "POST", "/_backupweb/style.css", nil, 405, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := httptest.NewRequest(tt.method, tt.path, nil)
			for k, v := range tt.header {
				req.Header.Set(k, v)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != tt.status {
				t.Fatalf("status = %d, want %d", rec.Code, tt.status)
			}
			if tt.status != 200 {
				return
			}
			hd := rec.Header()
			if hd.Get("Content-Type") != tt.contentType {
				t.Errorf("Content-Type = %q", hd.Get("Content-Type"))
			}
			if !strings.Contains(hd.Get("Cache-Control"), "max-age=31536000") {
				t.Errorf("Cache-Control = %q", hd.Get("Cache-Control"))
			}
			if hd.Get("X-Content-Type-Options") != "nosniff" || hd.Get("ETag") == "" {
				t.Errorf("headers = %v", hd)
			}
			if tt.method == "HEAD" && rec.Body.Len() != 0 {
				t.Error("HEAD with a body")
			}
		})
	}
}

func TestStaticURL(t *testing.T) {
	u := staticURL("style.css")
	if !strings.HasPrefix(u, "/_backupweb/style.css?v=") || len(u) != len("/_backupweb/style.css?v=")+16 {
		t.Fatalf("staticURL = %q", u)
	}
	if got := staticURL("none.css"); got != "/_backupweb/none.css" {
		t.Fatalf("staticURL(unknown) = %q", got)
	}
}

// TestMountOnce: Mount serves the assets, and a second Mount (the web
// layer's, then a provider's) neither panics nor changes anything.
func TestMountOnce(t *testing.T) {
	mux := http.NewServeMux()
	Mount(mux)
	Mount(mux)
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest("GET", "/_backupweb/style.css", nil))
	if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "text/css; charset=utf-8" {
		t.Fatalf("GET style.css: %d %q", rec.Code, rec.Header().Get("Content-Type"))
	}
}

func TestLogoutButton(t *testing.T) {
	got := string(LogoutButton(`t"><script>`))
	if !strings.Contains(got, `action="/logout"`) || !strings.Contains(got, `name="csrf_token" value="t&#34;&gt;&lt;script&gt;"`) || strings.Contains(got, "<script>") {
		t.Errorf("LogoutButton = %s", got)
	}
}
