package sessionauth

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/backupweb/backupweb/internal/session"
	"github.com/backupweb/backupweb/internal/testkit"
)

// TestAccountPageOfAnySessionType serves the account page of a guard of
// type oauth: two sessions of bob are listed (this one marked, with its
// client and browser), "end all others" ends the other one only, a form
// without the CSRF token or with an Authorization header ends nothing.
func TestAccountPageOfAnySessionType(t *testing.T) {
	m, err := session.NewManager(session.Options{Store: session.NewMemoryStore(nil), Key: []byte(strings.Repeat("k", 32)), Type: "oauth"})
	if err != nil {
		t.Fatal(err)
	}
	g := New(Options{Type: "oauth", Manager: m, LoginPath: "/oauth/login"})
	mux := http.NewServeMux()
	g.MountAccount(mux)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	begin := func(agent string) *http.Cookie {
		w := httptest.NewRecorder()
		r := httptest.NewRequest("GET", "/oauth/callback", nil)
		r.Header.Set("User-Agent", agent)
		if err := g.Begin(w, r, session.Data{Username: "bob"}); err != nil {
			t.Fatal(err)
		}
		return w.Result().Cookies()[0]
	}
	mine, other := begin("Firefox on the laptop"), begin("Phone browser")
	get := func(c *http.Cookie) (int, string) {
		req, _ := http.NewRequest("GET", srv.URL+AccountPath, nil)
		req.AddCookie(c)
		resp, err := testkit.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	code, page := get(mine)
	testkit.Holds(t, page, []string{"Firefox on the laptop (this session)", "Phone browser", "End all other sessions"}, []string{"Tokens for scripts"})
	if code != http.StatusOK {
		t.Fatalf("account page: %d", code)
	}
	post := func(form url.Values, hdr map[string]string) int {
		req, _ := http.NewRequest("POST", srv.URL+AccountEndPath, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		req.AddCookie(mine)
		resp, err := testkit.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	token := testkit.FormToken([]byte(page))
	if got := post(url.Values{"others": {"1"}}, nil); got != http.StatusForbidden {
		t.Fatalf("without the CSRF token: %d", got)
	}
	if got := post(url.Values{"others": {"1"}, "csrf_token": {token}}, map[string]string{"Authorization": "Bearer bwt_x"}); got != http.StatusForbidden {
		t.Fatalf("with an Authorization header: %d", got)
	}
	if code, _ := get(other); code != http.StatusOK {
		t.Fatal("the other session ended too early")
	}
	if got := post(url.Values{"others": {"1"}, "csrf_token": {token}}, nil); got != http.StatusOK && got != http.StatusSeeOther {
		t.Fatalf("end all others: %d", got)
	}
	if code, _ := get(other); code == http.StatusOK {
		t.Fatal("the other session still opens the account page")
	}
	if code, page := get(mine); code != http.StatusOK || strings.Contains(page, "Phone browser") {
		t.Fatalf("this session after ending the others: %d", code)
	}
}
