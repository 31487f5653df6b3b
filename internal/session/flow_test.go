package session

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// flowServer is a miniature of the login type's routes, enough to drive the
// manager through a browser-like client with a cookie jar.
func flowServer(t *testing.T, m *Manager) *httptest.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /login", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, m.FormToken(w, r))
	})
	mux.HandleFunc("POST /login", func(w http.ResponseWriter, r *http.Request) {
		if !m.CheckFormToken(r, r.PostFormValue("csrf_token")) {
			http.Error(w, "csrf", http.StatusForbidden)
			return
		}
		if _, err := m.Start(w, r, Data{Username: r.PostFormValue("username")}); err != nil {
			http.Error(w, "start", http.StatusInternalServerError)
			return
		}
		m.ClearCookie(w, r, m.FormCookieName())
		http.Redirect(w, r, "/me", http.StatusSeeOther)
	})
	mux.HandleFunc("GET /me", func(w http.ResponseWriter, r *http.Request) {
		s, ok, err := m.Load(r)
		if err != nil || !ok {
			http.Error(w, "unauthenticated", http.StatusUnauthorized)
			return
		}
		io.WriteString(w, s.Username+" "+m.CSRFToken(s))
	})
	mux.HandleFunc("POST /logout", func(w http.ResponseWriter, r *http.Request) {
		s, ok, err := m.Load(r)
		if err != nil || !ok || !m.ValidCSRF(s, r.Header.Get("X-CSRF-Token")) {
			http.Error(w, "forbidden", http.StatusForbidden)
			return
		}
		if err := m.Destroy(w, r); err != nil {
			http.Error(w, "destroy", http.StatusInternalServerError)
			return
		}
		http.Redirect(w, r, "/login", http.StatusSeeOther)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// TestBrowserFlow logs in, uses the session, logs out, and replays the old
// cookie, the way a browser and an attacker holding a copied cookie would.
func TestBrowserFlow(t *testing.T) {
	m := newTestManager(t, newClock(), nil, Options{})
	srv := flowServer(t, m)
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Jar: jar}
	u, _ := url.Parse(srv.URL)

	do := func(method, path, body string, hdr map[string]string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		if body != "" {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}

	if code, _ := do("GET", "/me", "", nil); code != http.StatusUnauthorized {
		t.Fatalf("GET /me before login: %d", code)
	}
	if code, _ := do("POST", "/login", "username=alice&csrf_token=forged", nil); code != http.StatusForbidden {
		t.Fatalf("login without a form token: %d, want 403", code)
	}
	_, formTok := do("GET", "/login", "", nil)
	code, body := do("POST", "/login", "username=alice&csrf_token="+url.QueryEscape(formTok), nil)
	if code != http.StatusOK || !strings.HasPrefix(body, "alice ") {
		t.Fatalf("login then /me: %d %q", code, body)
	}
	var stolen *http.Cookie
	for _, c := range jar.Cookies(u) {
		if c.Name == DefaultCookieName {
			stolen = c
		}
		if c.Name == DefaultFormCookieName {
			t.Error("the form cookie outlived the login")
		}
	}
	if stolen == nil {
		t.Fatal("no session cookie in the jar")
	}
	csrf := strings.TrimPrefix(body, "alice ")

	if code, _ := do("POST", "/logout", "", nil); code != http.StatusForbidden {
		t.Errorf("logout without CSRF token: %d, want 403", code)
	}
	if code, _ := do("POST", "/logout", "", map[string]string{"X-CSRF-Token": csrf}); code != http.StatusOK {
		t.Errorf("logout (following the 303 to /login): %d", code)
	}
	if code, _ := do("GET", "/me", "", nil); code != http.StatusUnauthorized {
		t.Errorf("GET /me after logout: %d, want 401", code)
	}
	// Replay the copied cookie from a fresh client.
	req, _ := http.NewRequest("GET", srv.URL+"/me", nil)
	req.AddCookie(&http.Cookie{Name: stolen.Name, Value: stolen.Value})
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("replayed cookie after logout: %d, want 401", resp.StatusCode)
	}
}
