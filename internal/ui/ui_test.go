package ui

import (
	"html/template"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/catalog"
	"github.com/backupweb/backupweb/internal/testkit"
)

var when = time.Date(2024, 5, 1, 12, 30, 5, 0, time.FixedZone("CEST", 2*3600))

func render(t *testing.T, status int, page string, data any) *httptest.ResponseRecorder {
	t.Helper()
	rec := httptest.NewRecorder()
	Render(rec, status, page, data)
	return rec
}

// checkPage asserts what every page has: status, type, no-store, the
// layout's parts, and nothing the Content-Security-Policy would block.
func checkPage(t *testing.T, rec *httptest.ResponseRecorder, status int) string {
	t.Helper()
	if rec.Code != status {
		t.Fatalf("status = %d, want %d", rec.Code, status)
	}
	if ct := rec.Header().Get("Content-Type"); ct != "text/html; charset=utf-8" {
		t.Errorf("Content-Type = %q", ct)
	}
	if cc := rec.Header().Get("Cache-Control"); cc != "no-store" {
		t.Errorf("Cache-Control = %q", cc)
	}
	body := rec.Body.String()
	testkit.Holds(t, body, []string{
		`<!doctype html>`, `<html lang="en">`, `name="viewport"`, `name="color-scheme"`,
		`href="/_backupweb/style.css?v=`, `<main id="main">`,
	}, nil)
	for _, banned := range []string{"<script", "style=", "<style", "http://", "https://"} {
		if strings.Contains(body, banned) {
			t.Errorf("page holds %q, which the policy forbids or which loads from elsewhere", banned)
		}
	}
	return body
}

func TestRenderCatalog(t *testing.T) {
	tests := []struct {
		name     string
		data     CatalogPage
		want     []string
		dontWant []string
	}{
		{
			name: "backups and session user",
			data: CatalogPage{
				Title: "Backups",
				User:  Viewer{Name: "alice<b>", Type: "flask-login", HasSession: true, CSRFToken: "tok-123"},
				Backups: []catalog.Backup{
					{Name: "a b?.tar", Size: 1536, Modified: when},
					{Name: "<script>x</script>.tar", Size: 10, Modified: when},
					{Name: "2026-12-04T02:00:00Z.tar.gz", Size: 10, Modified: when},
					{Name: "javascript:alert(1)", Size: 10, Modified: when},
				},
			},
			want: []string{
				`<title>Backups · backupweb</title>`,
				`<strong>alice&lt;b&gt;</strong>`,
				`<form method="post" action="/logout"`,
				`<input type="hidden" name="csrf_token" value="tok-123">`,
				`href="/backups/a%20b%3F.tar"`,
				`href="/backups/2026-12-04T02:00:00Z.tar.gz"`,
				`href="/backups/javascript:alert%281%29"`,
				`>a b?.tar</a>`,
				`<data value="1536">1.5 KiB</data>`,
				`<time datetime="2024-05-01T10:30:05Z">2024-05-01 10:30:05 UTC</time>`,
				`&lt;script&gt;x&lt;/script&gt;.tar`,
				`4 backups, 1.5 KiB in all`,
			},
			dontWant: []string{"<script>x", "No backups yet", "flask-login", "badge"},
		},
		{
			name:     "empty, no session",
			data:     CatalogPage{Title: "Backups", User: Viewer{Name: "anonymous", Type: "none"}},
			want:     []string{`No backups yet`, `<strong>anonymous</strong>`},
			dontWant: []string{`action="/logout"`, `csrf_token`, `<table`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := checkPage(t, render(t, http.StatusOK, "catalog", tt.data), http.StatusOK)
			testkit.Holds(t, body, tt.want, tt.dontWant)
		})
	}
}

func TestRenderLogin(t *testing.T) {
	tests := []struct {
		name     string
		data     LoginPage
		status   int
		want     []string
		dontWant []string
	}{
		{
			name:   "blank",
			data:   LoginPage{Title: "Sign in", Action: "/login", CSRFToken: "c1", Next: "/api/me?x=1"},
			status: http.StatusOK,
			want: []string{
				`<form method="post" action="/login"`,
				`name="csrf_token" value="c1"`,
				`name="next" value="/api/me?x=1"`,
				`name="username"`, `autocomplete="username"`,
				`name="password" type="password" autocomplete="current-password"`,
				`<label for="username">`, `<label for="password">`,
				`required autofocus`,
			},
			dontWant: []string{`role="alert"`},
		},
		{
			name:   "failed attempt",
			data:   LoginPage{Title: "Sign in", Action: "/login", CSRFToken: "c1", Username: `bob"><x`, Error: "Wrong <user>"},
			status: http.StatusUnauthorized,
			want: []string{
				`value="bob&#34;&gt;&lt;x"`,
				`<p class="alert" role="alert" id="login-error">Wrong &lt;user&gt;</p>`,
				`aria-describedby="login-error"`,
			},
			dontWant: []string{`bob"><x`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := checkPage(t, render(t, tt.status, "login", tt.data), tt.status)
			testkit.Holds(t, body, tt.want, tt.dontWant)
		})
	}
}

func TestRenderError(t *testing.T) {
	body := checkPage(t, render(t, http.StatusNotFound, "error", ErrorPage{Status: 404, Message: "No <such> backup."}), http.StatusNotFound)
	testkit.Holds(t, body, []string{`<title>Not Found · backupweb</title>`, `Error 404`, `No &lt;such&gt; backup.`, `<a href="/" id="back">`}, nil)
}

func TestRenderFailures(t *testing.T) {
	tests := []struct {
		name string
		page string
		data any
	}{
		{"unknown page", "nope", nil},
		{"wrong data", "catalog", ErrorPage{Status: 500}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := render(t, http.StatusOK, tt.page, tt.data)
			if rec.Code != http.StatusInternalServerError {
				t.Fatalf("status = %d, want 500", rec.Code)
			}
			if strings.Contains(rec.Body.String(), "<html") {
				t.Fatal("a half-rendered page was sent")
			}
		})
	}
}

func TestRenderKeepsCallersCacheControl(t *testing.T) {
	rec := httptest.NewRecorder()
	rec.Header().Set("Cache-Control", "private, max-age=5")
	Render(rec, http.StatusOK, "error", ErrorPage{Status: 200})
	if got := rec.Header().Get("Cache-Control"); got != "private, max-age=5" {
		t.Fatalf("Cache-Control = %q", got)
	}
}

func TestParseLoginTemplate(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "login.html")
	os.WriteFile(good, []byte(`<link rel="stylesheet" href="{{static "style.css"}}"><form action="{{.Action}}"><input name="csrf_token" value="{{.CSRFToken}}">{{.Error}}</form>`), 0o600)
	bad := filepath.Join(dir, "bad.html")
	os.WriteFile(bad, []byte(`{{.Action`), 0o600)
	foreign := filepath.Join(dir, "foreign.html")
	os.WriteFile(foreign, []byte(`{{template "content" .}}`), 0o600)

	tpl, err := ParseLoginTemplate(good)
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	RenderWith(rec, http.StatusUnauthorized, tpl, LoginPage{Action: "/in", CSRFToken: "t<", Error: "<no>"})
	if rec.Code != http.StatusUnauthorized {
		t.Fatalf("status = %d", rec.Code)
	}
	for _, w := range []string{`action="/in"`, `value="t&lt;"`, `&lt;no&gt;`, `/_backupweb/style.css?v=`} {
		if !strings.Contains(rec.Body.String(), w) {
			t.Errorf("output lacks %s: %s", w, rec.Body.String())
		}
	}

	for _, path := range []string{bad, filepath.Join(dir, "missing.html")} {
		if _, err := ParseLoginTemplate(path); err == nil || !strings.HasPrefix(err.Error(), "ui: ") {
			t.Errorf("ParseLoginTemplate(%s) error = %v", filepath.Base(path), err)
		}
	}
	// A template naming one of ours parses but fails when executed.
	tpl, err = ParseLoginTemplate(foreign)
	if err == nil {
		rec := httptest.NewRecorder()
		RenderWith(rec, http.StatusOK, tpl, LoginPage{})
		if rec.Code != http.StatusInternalServerError {
			t.Errorf("foreign template: status %d, want 500", rec.Code)
		}
	}
	rec = httptest.NewRecorder()
	RenderWith(rec, http.StatusOK, (*template.Template)(nil), nil)
	if rec.Code != http.StatusInternalServerError {
		t.Errorf("nil template: status %d", rec.Code)
	}
}

func TestHumanSize(t *testing.T) {
	tests := []struct {
		n    int64
		want string
	}{
		{0, "0 B"}, {1, "1 B"}, {1023, "1023 B"}, {1024, "1.0 KiB"}, {1536, "1.5 KiB"},
		{5 << 20, "5.0 MiB"}, {3 << 30, "3.0 GiB"}, {1 << 40, "1.0 TiB"}, {1 << 62, "4.0 EiB"},
	}
	for _, tt := range tests {
		if got := HumanSize(tt.n); got != tt.want {
			t.Errorf("HumanSize(%d) = %q, want %q", tt.n, got, tt.want)
		}
	}
}

// TestBackupsHref: every name is one segment of an absolute path, whatever
// it holds; nothing reads as a scheme, a query or a fragment.
func TestBackupsHref(t *testing.T) {
	for _, tt := range []struct{ rel, want string }{
		{"", "/"},
		{"top.tar", "/backups/top.tar"},
		{"db/", "/backups/db/"},
		{"2026-12-04T02:00:00Z.tar.gz", "/backups/2026-12-04T02:00:00Z.tar.gz"},
		{"db/pg-2026-12-04T02:00:00Z.sql.gz", "/backups/db/pg-2026-12-04T02:00:00Z.sql.gz"},
		{"javascript:alert(1)", "/backups/javascript:alert%281%29"},
		{"a?b#c%d;e f", "/backups/a%3Fb%23c%25d%3Be%20f"},
		{"-rf/--x", "/backups/-rf/--x"},
		{"ünï/データ", "/backups/%C3%BCn%C3%AF/%E3%83%87%E3%83%BC%E3%82%BF"},
		{"a:b/c:d/", "/backups/a:b/c:d/"},
	} {
		if got := BackupsHref(tt.rel); got != tt.want {
			t.Errorf("BackupsHref(%q) = %q, want %q", tt.rel, got, tt.want)
		}
	}
}
