package web

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/chromedp"

	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/auth/none"
	"github.com/backupweb/backupweb/internal/auth/sessionauth"
	"github.com/backupweb/backupweb/internal/catalog"
	"github.com/backupweb/backupweb/internal/refusal"
	"github.com/backupweb/backupweb/internal/testkit/browsertest"
	"github.com/backupweb/backupweb/internal/ui"
)

// viewport is a screen the pages must work on.
type viewport struct {
	name          string
	width, height int64
	opts          []chromedp.EmulateViewportOption
}

var viewports = []viewport{
	{"desktop", 1280, 800, nil},
	{"phone", 390, 844, []chromedp.EmulateViewportOption{
		chromedp.EmulateScale(2), chromedp.EmulateMobile, chromedp.EmulatePortrait, chromedp.EmulateTouch,
	}},
}

// screenshot saves a full-page PNG under the test's temporary folder and,
// when BACKUPWEB_SCREENSHOT_DIR is set, there too, for a person to look at.
func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	dirs := []string{t.TempDir()}
	if d := os.Getenv("BACKUPWEB_SCREENSHOT_DIR"); d != "" {
		dirs = append(dirs, d)
	}
	for _, d := range dirs {
		p := filepath.Join(d, name+".png")
		if err := os.WriteFile(p, png, 0o644); err != nil {
			t.Fatalf("save screenshot: %v", err)
		}
		t.Logf("screenshot: %s", p)
	}
}

// setColorScheme makes the page see prefers-color-scheme as scheme.
func setColorScheme(scheme string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}},
		})
		return err
	})
}

// checkLayout asserts that the stylesheet was applied (the policy let it
// through) and that nothing is wider than the screen.
func checkLayout(t *testing.T, ctx context.Context) {
	t.Helper()
	sheets, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.styleSheets.length`))
	if err != nil || sheets != 1 {
		t.Errorf("stylesheets loaded = %d, %v; want 1", sheets, err)
	}
	font, err := chromedp.Run(ctx, chromedp.Evaluate[string](`getComputedStyle(document.body).fontFamily`))
	if err != nil || !strings.Contains(font, "system-ui") {
		t.Errorf("body font = %q, %v: stylesheet not applied", font, err)
	}
	overflow, err := chromedp.Run(ctx, chromedp.Evaluate[bool](
		`document.documentElement.scrollWidth > document.documentElement.clientWidth`))
	if err != nil || overflow {
		t.Errorf("page wider than the screen: %v, %v", overflow, err)
	}
}

func TestBrowserCatalogPage(t *testing.T) {
	dir := fixture(t)
	odd := []string{"ünïcode backup.tar", "a very long backup name without any spaces-0123456789abcdefghijklmnopqrstuvwxyz.tar.gz"}
	for _, n := range odd {
		writeBackup(t, dir, n, strings.Repeat("x", 3000), base.Add(-24*60*60e9))
	}
	log, _ := quietLogger()
	srv := httptest.NewServer(NewHandler(Options{Provider: none.Provider{}, Catalog: catalog.New(dir), Logger: log}))
	defer srv.Close()
	ctx := browsertest.New(t)

	names := []string{}
	for _, f := range backupFiles {
		names = append(names, f.name)
	}
	names = append(names, odd...)

	for _, vp := range viewports {
		for _, scheme := range []string{"light", "dark"} {
			t.Run(vp.name+"-"+scheme, func(t *testing.T) {
				err := chromedp.Do(ctx,
					chromedp.EmulateViewport(vp.width, vp.height, vp.opts...),
					setColorScheme(scheme),
					chromedp.Navigate(srv.URL+"/"),
					chromedp.WaitVisible(chromedp.CSS("table.backups")),
				)
				if err != nil {
					t.Fatal(err)
				}
				text, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("table.backups")))
				if err != nil {
					t.Fatal(err)
				}
				for _, n := range names {
					if !strings.Contains(text, n) {
						t.Errorf("table text lacks %q:\n%s", n, text)
					}
				}
				hrefs, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](
					`[...document.querySelectorAll("td.name a")].map(a => a.getAttribute("href"))`))
				if err != nil {
					t.Fatal(err)
				}
				for _, n := range names {
					if !slices.Contains(hrefs, "/backups/"+url.PathEscape(n)) {
						t.Errorf("no link to %q in %v", n, hrefs)
					}
				}
				// The words a screen reader reads (on a phone "Signed in as"
				// is hidden from sight only).
				who, err := chromedp.Run(ctx, chromedp.Evaluate[string](
					`document.querySelector(".who").textContent.replace(/\s+/g, " ")`))
				if err != nil || !strings.Contains(who, "Signed in as anonymous") || strings.Contains(who, "none") {
					t.Errorf("user line = %q, %v", who, err)
				}
				checkLayout(t, ctx)
				bg, err := chromedp.Run(ctx, chromedp.Evaluate[string](`getComputedStyle(document.body).backgroundColor`))
				if err != nil {
					t.Fatal(err)
				}
				if dark := bg == "rgb(15, 20, 25)"; dark != (scheme == "dark") {
					t.Errorf("background %s in %s mode", bg, scheme)
				}
				screenshot(t, ctx, "catalog-"+vp.name+"-"+scheme)
			})
		}
	}

	t.Run("error page", func(t *testing.T) {
		err := chromedp.Do(ctx,
			chromedp.EmulateViewport(390, 844, viewports[1].opts...),
			setColorScheme("light"),
			chromedp.Navigate(srv.URL+"/backups/missing.tar"),
			chromedp.WaitVisible(chromedp.CSS("h1")),
		)
		if err != nil {
			t.Fatal(err)
		}
		h1, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("h1")))
		if err != nil || h1 != "Not Found" {
			t.Errorf("heading = %q, %v", h1, err)
		}
		checkLayout(t, ctx)
		screenshot(t, ctx, "error-phone")
	})
}

// TestBrowserSessionPages drives the pages a session user sees: the logout
// button must post the CSRF token to /logout through the real browser (so
// the Content-Security-Policy and the cross-origin protection let a
// same-origin form through), and the login page must look right.
func TestBrowserSessionPages(t *testing.T) {
	var gotToken string
	p := mountingProvider{&fakeProvider{admit: true,
		user: auth.User{Name: "alice", Type: "flask-login"}.WithCSRF(func() string { return "csrf-xyz" })}}
	p.mount = func(mux *http.ServeMux) {
		mux.HandleFunc("POST /logout", func(w http.ResponseWriter, r *http.Request) {
			gotToken = r.PostFormValue("csrf_token")
			http.Redirect(w, r, "/login", http.StatusSeeOther)
		})
		mux.HandleFunc("GET /login", func(w http.ResponseWriter, r *http.Request) {
			ui.Render(w, http.StatusUnauthorized, "login", ui.LoginPage{
				Title: "Log in to backupweb", Action: "/login", CSRFToken: "t", Next: "/",
				Username: "alice", Error: "Wrong user name or password.",
			})
		})
	}
	log, _ := quietLogger()
	srv := httptest.NewServer(NewHandler(Options{Provider: p, Catalog: catalog.New(fixture(t)), Logger: log}))
	defer srv.Close()
	ctx := browsertest.New(t)

	err := chromedp.Do(ctx,
		chromedp.EmulateViewport(390, 844, viewports[1].opts...),
		chromedp.Navigate(srv.URL+"/"),
		chromedp.WaitVisible(chromedp.CSS(".logout button")),
	)
	if err != nil {
		t.Fatal(err)
	}
	checkLayout(t, ctx)
	screenshot(t, ctx, "catalog-session-phone")

	err = chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(".logout button")),
		chromedp.WaitVisible(chromedp.CSS("#password")),
	)
	if err != nil {
		t.Fatal(err)
	}
	if gotToken != "csrf-xyz" {
		t.Fatalf("logout posted csrf_token %q", gotToken)
	}
	loc, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil || !strings.HasSuffix(loc, "/login") {
		t.Fatalf("after logout at %q, %v", loc, err)
	}
	alert, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("[role=alert]")))
	if err != nil || alert != "Wrong user name or password." {
		t.Errorf("alert = %q, %v", alert, err)
	}
	checkLayout(t, ctx)
	screenshot(t, ctx, "login-phone")
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 800), setColorScheme("dark"), chromedp.Reload()); err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, "login-desktop-dark")
}

// TestBrowserHeaderHeight: the header bar has one height on every page,
// signed in (a name and a sign-out button, a name as long as an e-mail
// address too) or not (the sign-in page, an error page), light and dark, on
// a desktop and on a phone, so it does not jump between pages; and no page
// scrolls sideways.
func TestBrowserHeaderHeight(t *testing.T) {
	log, _ := quietLogger()
	serve := func(name string) *httptest.Server {
		p := mountingProvider{&fakeProvider{admit: true,
			user: auth.User{Name: name, Type: "flask-login"}.WithCSRF(func() string { return "csrf-xyz" })}}
		p.mount = func(mux *http.ServeMux) {
			mux.HandleFunc("GET /login", func(w http.ResponseWriter, r *http.Request) {
				ui.Render(w, http.StatusOK, "login", ui.LoginPage{Title: "Sign in", Action: "/login", CSRFToken: "t", Next: "/"})
			})
		}
		srv := httptest.NewServer(NewHandler(Options{Provider: p, Catalog: catalog.New(fixture(t)), Logger: log}))
		t.Cleanup(srv.Close)
		return srv
	}
	alice := serve("alice")
	// A name as long as an e-mail address an OAuth provider vouches for.
	long := serve("firstname.lastname-of-the-backup-team@example.com")
	ctx := browsertest.New(t)
	pages := []struct{ name, url, ready string }{
		{"signed in", alice.URL + "/", ".logout button"},
		{"signed in, long name", long.URL + "/", ".logout button"},
		{"login", alice.URL + "/login", "#password"},
		{"not found", alice.URL + "/no/such/page", "main"},
	}
	for _, vp := range viewports {
		for _, scheme := range []string{"light", "dark"} {
			heights := map[string]float64{}
			for _, pg := range pages {
				err := chromedp.Do(ctx,
					chromedp.EmulateViewport(vp.width, vp.height, vp.opts...), setColorScheme(scheme),
					chromedp.Navigate(pg.url), chromedp.WaitVisible(chromedp.CSS(pg.ready)))
				if err != nil {
					t.Fatalf("%s %s %s: %v", vp.name, scheme, pg.name, err)
				}
				h, err := chromedp.Run(ctx, chromedp.Evaluate[float64](`document.querySelector("header.bar").getBoundingClientRect().height`))
				if err != nil {
					t.Fatalf("%s %s %s: measuring the header: %v", vp.name, scheme, pg.name, err)
				}
				heights[pg.name] = h
				if pg.name == "signed in, long name" && scheme == "light" {
					screenshot(t, ctx, "header-long-name-"+vp.name)
				}
				wide, err := chromedp.Run(ctx, chromedp.Evaluate[bool](
					`document.documentElement.scrollWidth > document.documentElement.clientWidth`))
				if err != nil || wide {
					t.Errorf("%s %s %s: the page scrolls sideways (%v)", vp.name, scheme, pg.name, err)
				}
			}
			for _, h := range heights {
				if h != heights["login"] {
					t.Errorf("%s, %s: header heights differ: %v", vp.name, scheme, heights)
					break
				}
			}
		}
	}
}

// TestBrowserErrorPages shows a real browser the refusals a person meets —
// a Basic 401 (its body), a stale logout form (403), an unknown address
// (404), a throttled client (429) — and checks that each is the styled
// page, with the stylesheet applied and the sentence a person can act on.
func TestBrowserErrorPages(t *testing.T) {
	sessions, err := sessionauth.OpenSessions(auth.Deps{SecretKey: []byte(strings.Repeat("k", 32)), StateDir: t.TempDir()}, "flask-login", sessionauth.Settings{IdleTimeout: time.Minute, Lifetime: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	log, _ := quietLogger()
	guard := sessionauth.New(sessionauth.Options{Type: "flask-login", Manager: sessions.Manager, LoginPath: "/login", Errors: NewErrors(log)})
	serve := func(p auth.Provider) *httptest.Server {
		srv := httptest.NewServer(NewHandler(Options{Provider: p, Catalog: catalog.New(t.TempDir()), Logger: log}))
		t.Cleanup(srv.Close)
		return srv
	}
	refusing := serve(&fakeProvider{admit: false})
	open := serve(mountingProvider{&fakeProvider{admit: true, mount: func(mux *http.ServeMux) { mux.HandleFunc("POST /logout", guard.Logout) }}})
	throttled := serve(&fakeProvider{err: &refusal.RetryError{After: 14*time.Minute + 10*time.Second}})
	ctx := browsertest.New(t)
	// A person shown the Basic password prompt who presses Cancel sees the
	// 401's body: answer every prompt with "cancel", let every other
	// request go on.
	events := make(chan any, 64)
	if err := chromedp.Listen(ctx, func(ev any) {
		switch ev.(type) {
		case *fetch.EventAuthRequired, *fetch.EventRequestPaused:
			events <- ev
		}
	}); err != nil {
		t.Fatal(err)
	}
	go func() {
		for ev := range events {
			chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
				switch e := ev.(type) {
				case *fetch.EventAuthRequired:
					_, err := cdp.Call(ctx, tg, fetch.ContinueWithAuth, fetch.ContinueWithAuthParams{RequestID: e.RequestID,
						AuthChallengeResponse: &fetch.AuthChallengeResponse{Response: fetch.AuthChallengeResponseResponseCancelAuth}})
					return err
				case *fetch.EventRequestPaused:
					_, err := cdp.Call(ctx, tg, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: e.RequestID})
					return err
				}
				return nil
			}))
		}
	}()
	handleAuth := true
	if err := chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, fetch.Enable, fetch.EnableParams{HandleAuthRequests: &handleAuth})
		return err
	})); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name, url, submit, status, sentence string
	}{
		{"401-basic", refusing.URL + "/", "", "Error 401", "authentication required"},
		{"403-stale-form", open.URL + "/", "/logout", "Error 403", "This page is out of date"},
		{"404", open.URL + "/no/such/page", "", "Error 404", "There is nothing at this address."},
		{"429", throttled.URL + "/", "", "Error 429", "Try again in 15 minutes."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			actions := []chromedp.Action[chromedp.Void]{chromedp.EmulateViewport(1280, 800), chromedp.Navigate(tc.url)}
			if tc.submit != "" {
				actions = append(actions, chromedp.Evaluate[chromedp.Void](`(() => { const f = document.createElement("form");
					f.method = "post"; f.action = "`+tc.submit+`"; document.body.appendChild(f); f.submit(); })()`))
			}
			actions = append(actions, chromedp.WaitVisible(chromedp.CSS("p.status")))
			if err := chromedp.Do(ctx, actions...); err != nil {
				t.Fatal(err)
			}
			text, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("main")))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(text, tc.status) || !strings.Contains(text, tc.sentence) || !strings.Contains(text, "Back to the backups") {
				t.Errorf("page text %q lacks %q, %q or the link back", text, tc.status, tc.sentence)
			}
			checkLayout(t, ctx)
			screenshot(t, ctx, "error-"+tc.name)
		})
	}
}
