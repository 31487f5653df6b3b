package ui

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/backupweb/backupweb/internal/testkit"
)

// TestBrandedPages: every page names the service by [ui] title and what
// it guards by [ui] product_name, and speaks one language ("Sign in",
// "Sign out", "Signed in as"), never an authentication type's name; the
// zero Brand keeps backupweb's own wording.
func TestBrandedPages(t *testing.T) {
	syncthing := Brand{Title: "Syncthing <NAS>", Product: "Syncthing"}
	for _, tc := range []struct {
		name     string
		page     string
		data     any
		want     []string
		dontWant []string
	}{
		{"error, default", "error", ErrorPage{Status: 404, Message: "Nothing here."},
			[]string{`<title>Not Found · backupweb</title>`, `<span class="brand-name">backupweb</span></a>`, `<a href="/" id="back">Back to the backups</a>`},
			[]string{"Syncthing", "Sign in again"}},
		{"error, branded", "error", ErrorPage{Brand: syncthing, Status: 503, Message: "Sign-in is unavailable right now."},
			[]string{`<title>Service Unavailable · Syncthing &lt;NAS&gt;</title>`, `<span class="brand-name">Syncthing &lt;NAS&gt;</span></a>`, `<a href="/" id="back">Back to Syncthing</a>`},
			[]string{"· backupweb", "> backupweb", ">backupweb<", "backups", "<NAS>"}},
		{"signed out, branded", "error", ErrorPage{Brand: syncthing, Status: 200, Title: "Signed out", Message: "You have signed out.", SignIn: "/oauth/login?next=%2F"},
			[]string{`<a href="/oauth/login?next=%2F" id="sign-in-again">Sign in again</a>`, `Back to Syncthing`},
			[]string{"· backupweb", "> backupweb", ">backupweb<", "Log in", "Log out"}},
		{"login, branded", "login", LoginPage{Brand: syncthing, Title: "Sign in", Action: "/login", CSRFToken: "c"},
			[]string{`<title>Sign in · Syncthing &lt;NAS&gt;</title>`, `<button type="submit">Sign in</button>`},
			[]string{"· backupweb", "> backupweb", ">backupweb<", "Log in"}},
		{"catalog, default", "catalog", CatalogPage{Title: "Backups", User: Viewer{Name: "alice", Type: "flask-login", HasSession: true, CSRFToken: "t"}},
			[]string{`<title>Backups · backupweb</title>`, `<span class="who-label">Signed in as</span> <strong>alice</strong>`, `<button type="submit">Sign out</button>`},
			[]string{"flask-login", "Log out"}},
		{"logout confirmation, branded", "logout", LogoutPage{Brand: syncthing, User: "alice", CSRFToken: "tok", Next: "/app?x=1"},
			[]string{`<title>Sign out · Syncthing &lt;NAS&gt;</title>`, `Signed in as <strong>alice</strong>`,
				`<form method="post" action="/logout" class="stack" id="sign-out">`, `name="csrf_token" value="tok"`,
				`name="next" value="/app?x=1"`, `<button type="submit">Sign out</button>`, `<a href="/app?x=1" id="back">Back to Syncthing</a>`},
			[]string{"· backupweb", "> backupweb", ">backupweb<", "Log out", "Signed out"}},
		{"logout confirmation, no next", "logout", LogoutPage{User: "alice", CSRFToken: "tok"},
			[]string{`<title>Sign out · backupweb</title>`, `<a href="/" id="back">Back to the backups</a>`},
			[]string{`name="next"`}},
		{"logout, not signed in", "logout", LogoutPage{Brand: syncthing, SignIn: "/login?next=%2F"},
			[]string{`<title>Signed out · Syncthing &lt;NAS&gt;</title>`, `You are not signed in.`, `<a href="/login?next=%2F" id="sign-in-again">Sign in again</a>`},
			[]string{"<form", "csrf_token"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status := http.StatusOK
			if e, ok := tc.data.(ErrorPage); ok {
				status = e.Status
			}
			body := checkPage(t, render(t, status, tc.page, tc.data), status)
			testkit.Holds(t, body, tc.want, tc.dontWant)
		})
	}
}

func TestBrandDefaultsAndContext(t *testing.T) {
	if b := (Brand{}); b.Name() != "backupweb" || b.BackLabel() != "Back to the backups" || b.ProductName() != "the backups" {
		t.Fatalf("zero Brand: %q %q", b.Name(), b.BackLabel())
	}
	if b := BrandOf(context.Background()); b != (Brand{}) {
		t.Fatalf("BrandOf an empty context = %+v", b)
	}
	want := Brand{Title: "Home", Product: "Syncthing"}
	var got Brand
	h := Branded(want)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got = BrandOf(r.Context()) }))
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil))
	if got != want {
		t.Fatalf("Branded: handler saw %+v, want %+v", got, want)
	}
}
