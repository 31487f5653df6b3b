package web

import (
	"bufio"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/catalog"
	"github.com/backupweb/backupweb/internal/testkit"
)

// TestTraversalIsNotFound sends every way of naming something that is not
// a regular file inside the folder; each must be 404, protected,
// and never show the secret beside the folder.
func TestTraversalIsNotFound(t *testing.T) {
	h, dir := noneHandler(t)
	targets := []string{
		"/backups/..",
		"/backups/.",
		"/backups/%2e%2e",
		"/backups/%2E%2E",
		"/backups/.%2e",
		"/backups/..%2f",
		"/backups/..%2fsecret.txt",
		"/backups/..%2Fsecret.txt",
		"/backups/%2e%2e%2fsecret.txt",
		"/backups/../secret.txt",
		"/backups/../../etc/passwd",
		"/backups/%2F",
		"/backups/%2Fetc%2Fpasswd",
		"/backups/%2f" + strings.ReplaceAll(strings.TrimPrefix(dir, "/"), "/", "%2f") + "%2f..%2fsecret.txt",
		"/backups//etc/passwd",
		"/backups/..%5csecret.txt",
		"/backups/..%5C..%5Csecret.txt",
		"/backups/sub%2finner.tar",
		"/backups/sub%5cinner.tar",
		"/backups/link-out",
		"/backups/link-in",
		"/backups/./nightly-2024-05-01.tar.gz",
		"/backups/nightly-2024-05-01.tar.gz/",
		"/backups/nightly-2024-05-01.tar.gz%00",
		"/backups/%00",
	}
	for _, target := range targets {
		t.Run(target, func(t *testing.T) {
			rec := do(h, "GET", target, map[string]string{"Accept": "text/html"})
			if rec.Code != http.StatusNotFound {
				t.Fatalf("status = %d, want 404 (Location %q)", rec.Code, rec.Header().Get("Location"))
			}
			if strings.Contains(rec.Body.String(), "top secret") || strings.Contains(rec.Body.String(), "INNER-CONTENT") {
				t.Fatal("body holds a file's content")
			}
			checkSecurityHeaders(t, rec.Header())
			if rec.Header().Get("Content-Disposition") != "" {
				t.Error("404 with Content-Disposition")
			}
		})
	}
}

// TestTraversalOverTheWire repeats the worst cases through a real server
// and client, which send the path exactly as written.
func TestTraversalOverTheWire(t *testing.T) {
	h, _ := noneHandler(t)
	srv := httptest.NewServer(h)
	defer srv.Close()
	for _, target := range []string{
		"/backups/../secret.txt", "/backups/..%2fsecret.txt", "/backups/%2e%2e%2fsecret.txt",
		"/backups/..%5csecret.txt", "/backups/link-out", "/backups/sub%2finner.tar",
	} {
		req, err := http.NewRequest("GET", srv.URL+target, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := srv.Client().Transport.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := readAll(resp)
		if req.URL.RequestURI() != target {
			t.Fatalf("client rewrote %s to %s", target, req.URL.RequestURI())
		}
		if resp.StatusCode != http.StatusNotFound || strings.Contains(string(body), "top secret") {
			t.Errorf("%s: status %d", target, resp.StatusCode)
		}
	}
}

// sessionHandler serves a user with a session, and a provider that mounts
// a logout route and two handlers that panic.
func sessionHandler(t *testing.T) (http.Handler, func() string) {
	p := mountingProvider{&fakeProvider{admit: true,
		user: auth.User{Name: "alice", Type: "flask-login"}.WithCSRF(func() string { return "csrf-abc" })}}
	p.mount = func(mux *http.ServeMux) {
		mux.HandleFunc("POST /logout", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "/login", http.StatusSeeOther)
		})
		mux.HandleFunc("GET /boom", func(http.ResponseWriter, *http.Request) {
			panic("kaboom")
		})
		mux.HandleFunc("GET /boom-late", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Disposition", "attachment")
			w.Write([]byte("partial"))
			panic("kaboom late")
		})
	}
	log, buf := quietLogger()
	return NewHandler(Options{Provider: p, Catalog: catalog.New(fixture(t)), Logger: log}), buf.String
}

func TestLogoutButtonForSessions(t *testing.T) {
	h, _ := sessionHandler(t)
	body := do(h, "GET", "/", nil).Body.String()
	testkit.Holds(t, body, []string{`<form method="post" action="/logout"`, `name="csrf_token" value="csrf-abc"`, `<span class="who-label">Signed in as</span> <strong>alice</strong>`, `Sign out`}, nil)
	if strings.Contains(body, "flask-login") {
		t.Error("the page shows the authentication type's name to a person")
	}
	nh, _ := noneHandler(t)
	if strings.Contains(do(nh, "GET", "/", nil).Body.String(), "/logout") {
		t.Error("type none shows a logout button")
	}
}

func TestCrossOriginProtection(t *testing.T) {
	h, _ := sessionHandler(t)
	tests := []struct {
		name   string
		target string
		header map[string]string
		status int
	}{
		{"cross-site fetch metadata", "/logout", map[string]string{"Sec-Fetch-Site": "cross-site"}, 403},
		{"same-site other origin", "/logout", map[string]string{"Sec-Fetch-Site": "same-site"}, 403},
		{"foreign origin", "/logout", map[string]string{"Origin": "https://evil.example"}, 403},
		{"cross-site api", "/api/backups", map[string]string{"Sec-Fetch-Site": "cross-site"}, 403},
		{"same origin", "/logout", map[string]string{"Sec-Fetch-Site": "same-origin"}, 303},
		{"matching origin", "/logout", map[string]string{"Origin": "http://example.com"}, 303},
		{"no browser headers", "/logout", nil, 303},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := do(h, "POST", tt.target, tt.header)
			if rec.Code != tt.status {
				t.Fatalf("status = %d, want %d", rec.Code, tt.status)
			}
			checkSecurityHeaders(t, rec.Header())
			if tt.status == 403 && strings.HasPrefix(tt.target, "/api/") &&
				!strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") {
				t.Errorf("API refusal is %q, want JSON", rec.Header().Get("Content-Type"))
			}
		})
	}
	// Reading is never refused: a link from another site must work.
	if rec := do(h, "GET", "/", map[string]string{"Sec-Fetch-Site": "cross-site"}); rec.Code != 200 {
		t.Errorf("cross-site GET: %d", rec.Code)
	}
}

func TestPanicIsA500(t *testing.T) {
	h, logs := sessionHandler(t)
	rec := do(h, "GET", "/boom", nil)
	if rec.Code != http.StatusInternalServerError {
		t.Fatalf("status = %d, want 500", rec.Code)
	}
	checkSecurityHeaders(t, rec.Header())
	if strings.Contains(rec.Body.String(), "kaboom") {
		t.Error("the panic's value reached the client")
	}
	if rec := do(h, "GET", "/api/me", nil); rec.Code != 200 {
		t.Errorf("after a panic: %d", rec.Code)
	}
	if !strings.Contains(logs(), "kaboom") {
		t.Errorf("panic not logged: %s", logs())
	}
}

// TestPanicAfterWriteCutsConnection: once bytes have gone out a 500 cannot
// be sent; the client must see a broken response and the server live on.
func TestPanicAfterWriteCutsConnection(t *testing.T) {
	h, _ := sessionHandler(t)
	srv := httptest.NewServer(h)
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL + "/boom-late")
	if err == nil {
		_, err = readAll(resp)
	}
	if err == nil {
		t.Fatal("a response cut short by a panic read as complete")
	}
	resp, err = srv.Client().Get(srv.URL + "/healthz")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("server after panic: %v", err)
	}
	resp.Body.Close()
}

// TestBodiesBounded: a body announced larger than MaxBodyBytes is refused
// with 413 before it is read, whatever the route; one that is not
// announced (chunked) is not read past the limit.
func TestBodiesBounded(t *testing.T) {
	h, _ := noneHandler(t)
	srv := httptest.NewServer(h)
	defer srv.Close()
	for _, path := range []string{"/logout", "/api/backups", "/", "/nope"} {
		req, _ := http.NewRequest("POST", srv.URL+path, strings.NewReader(strings.Repeat("a", MaxBodyBytes+1)))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusRequestEntityTooLarge {
			t.Errorf("POST %s with %d bytes: %d, want 413", path, MaxBodyBytes+1, resp.StatusCode)
		}
	}
}

// TestEncodedDotSegmentsProtected: a path under /backups/ that is not
// canonical once decoded is answered like every other protected path
// (the challenge), never an unprotected 404 or redirect.
func TestEncodedDotSegmentsProtected(t *testing.T) {
	h := NewHandler(Options{Provider: &fakeProvider{admit: false}, Catalog: catalog.New(t.TempDir())})
	srv := httptest.NewServer(h)
	defer srv.Close()
	for _, p := range []string{"/backups/%2e%2e/x", "/backups/%2E%2E/%2E%2E/etc/passwd", "/backups/.%2e/x", "/backups/x/%2e%2e/y", "/backups/../x"} {
		req, _ := http.NewRequest("GET", srv.URL+"/", nil)
		req.URL.Opaque = p
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("GET %s without credentials: %d, want 401 like every protected path", p, resp.StatusCode)
		}
	}
}

// TestOptionsStar: "OPTIONS *" reaches the handler and carries the
// security headers.
func TestOptionsStar(t *testing.T) {
	h, _ := noneHandler(t)
	srv := httptest.NewUnstartedServer(h)
	srv.Config = NewServer(h, slog.New(slog.DiscardHandler))
	srv.Start()
	defer srv.Close()
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "OPTIONS * HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusNoContent || resp.Header.Get("Content-Security-Policy") == "" || resp.Header.Get("X-Content-Type-Options") != "nosniff" {
		t.Fatalf("OPTIONS *: %d %v", resp.StatusCode, resp.Header)
	}
}
