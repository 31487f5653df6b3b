package auth

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/attrs"
	"github.com/backupweb/backupweb/internal/password"
	"github.com/backupweb/backupweb/internal/refusal"
)

// fakeProvider admits requests carrying X-User and records challenges.
type fakeProvider struct{ err error }

func (fakeProvider) Type() string { return "fake" }

func (p fakeProvider) Identify(r *http.Request) (User, bool, error) {
	if p.err != nil {
		return User{}, false, p.err
	}
	if u := r.Header.Get("X-User"); u != "" {
		return User{Name: u, Type: "fake"}, true, nil
	}
	return User{}, false, nil
}

func (fakeProvider) Challenge(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("WWW-Authenticate", `Fake realm="t"`)
	testErrs.Refuse(w, r, refusal.NoCredentials)
}

// testErrs answers JSON under /api/, as the program's error writer does.
var testErrs = &refusal.Errors{JSONPaths: []string{"/api/"}}

func TestRequireAuth(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, found := FromContext(r.Context())
		if !found {
			t.Error("no user in context")
		}
		fmt.Fprint(w, u.Name)
	})
	tests := []struct {
		name       string
		p          Provider
		path, user string
		wantStatus int
		wantBody   string
		wantHeader map[string]string
	}{
		{"admitted", fakeProvider{}, "/", "alice", 200, "alice", nil},
		{"challenged api", fakeProvider{}, "/api/me", "", 401, `{"error":"authentication required"}`,
			map[string]string{"WWW-Authenticate": `Fake realm="t"`, "Content-Type": "application/json"}},
		{"throttled", fakeProvider{err: &refusal.RetryError{After: 1500 * time.Millisecond}}, "/api/me", "", 429,
			`{"error":"Too many failed attempts. Try again in 1 minute."}`, map[string]string{"Retry-After": "2"}},
		{"busy", fakeProvider{err: fmt.Errorf("x: %w", password.ErrBusy)}, "/", "", 503, "busy", map[string]string{"Retry-After": "1"}},
		{"broken", fakeProvider{err: errors.New("store down")}, "/api/me", "", 500, "server error", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			r := httptest.NewRequest("GET", tt.path, nil)
			if tt.user != "" {
				r.Header.Set("X-User", tt.user)
			}
			RequireAuth(tt.p, testErrs, Audit{})(ok).ServeHTTP(rec, r)
			if rec.Code != tt.wantStatus {
				t.Fatalf("status %d, want %d", rec.Code, tt.wantStatus)
			}
			if !strings.Contains(rec.Body.String(), tt.wantBody) {
				t.Errorf("body %q does not contain %q", rec.Body.String(), tt.wantBody)
			}
			if rec.Header().Get("Cache-Control") != "no-store" {
				t.Error("missing Cache-Control: no-store")
			}
			for k, v := range tt.wantHeader {
				if got := rec.Header().Get(k); got != v {
					t.Errorf("%s = %q, want %q", k, got, v)
				}
			}
			if strings.HasPrefix(tt.path, "/api/") && tt.wantStatus >= 400 {
				var body map[string]string
				if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || body["error"] == "" {
					t.Errorf("API error body %q is not {\"error\": ...}", rec.Body.String())
				}
			}
		})
	}
}

func TestWantsHTML(t *testing.T) {
	tests := []struct {
		method, accept string
		want           bool
	}{
		{"GET", "text/html,application/xhtml+xml,*/*;q=0.8", true},
		{"GET", "TEXT/HTML", true},
		{"GET", "application/json", false},
		{"GET", "", false},
		{"GET", "*/*", false},
		{"POST", "text/html", false},
		{"GET", "text/htmlx", false},
	}
	for _, tt := range tests {
		r := httptest.NewRequest(tt.method, "/", nil)
		if tt.accept != "" {
			r.Header.Set("Accept", tt.accept)
		}
		if got := WantsHTML(r); got != tt.want {
			t.Errorf("WantsHTML(%s, %q) = %v", tt.method, tt.accept, got)
		}
	}
}

func TestRecord(t *testing.T) {
	u := User{Name: "a@example.com", Type: "oauth", Attrs: attrs.Of(map[string]string{"provider": "google", "username": "spoof"})}.WithCSRF(func() string { return "t" })
	rec := u.Record()
	if rec["username"] != "a@example.com" || rec["auth_type"] != "oauth" || rec["provider"] != "google" {
		t.Fatalf("record = %v", rec)
	}
	if _, ok := rec["csrf_token"]; ok || !u.HasSession() {
		t.Fatal("the CSRF token is not part of the record")
	}
}

func TestAuditRefusedCannotForgeLines(t *testing.T) {
	for _, h := range []func(*bytes.Buffer) slog.Handler{
		func(b *bytes.Buffer) slog.Handler { return slog.NewTextHandler(b, nil) },
		func(b *bytes.Buffer) slog.Handler { return slog.NewJSONHandler(b, nil) },
	} {
		var buf bytes.Buffer
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = "192.0.2.1:1234"
		Audit{Log: slog.New(h(&buf))}.Refused(r, "basic", ReasonBadCredentials, "eve\nlevel=INFO msg=\"auth ok\" user=admin")
		out := buf.String()
		if strings.Count(out, "\n") != 1 {
			t.Fatalf("one refusal gave several lines:\n%s", out)
		}
		for _, want := range []string{"auth", "basic", "bad credentials", "192.0.2.1", "WARN", "eve"} {
			if !strings.Contains(out, want) {
				t.Errorf("log line %q lacks %q", out, want)
			}
		}
	}
}
