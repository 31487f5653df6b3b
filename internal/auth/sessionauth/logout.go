package sessionauth

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/backupweb/backupweb/internal/ui"
)

// RedirectParam is the query parameter oauth2-proxy and its users name the
// page to go to after signing out (/logout?rd=...); it is read as next is.
const RedirectParam = "rd"

// LogoutPage is the handler of GET /logout: a page with the one sign-out
// form (a POST to /logout with the session's CSRF token and next), so that
// a guarded application, which cannot know the token, can link to it. It
// works in every mode, catalog or not. next (or rd) is carried to the form
// when SafeNext accepts it, and dropped otherwise. Without a session the
// page says that no one is signed in and offers the sign-in page. The
// page changes nothing: signing out takes the POST.
func (g *Guard) LogoutPage(w http.ResponseWriter, r *http.Request) {
	page := ui.LogoutPage{Brand: ui.BrandOf(r.Context()), Next: g.logoutNext(r)}
	u, ok, err := g.Identify(r)
	if err != nil {
		g.o.Errors.Error(w, r, err)
		return
	}
	if ok {
		page.User, page.CSRFToken = u.Name, u.CSRFToken()
	} else {
		page.SignIn = g.LoginURLFor(page.Next)
	}
	w.Header().Set("Cache-Control", "no-store")
	if err := ui.Render(w, http.StatusOK, "logout", page); err != nil {
		g.o.Logger.ErrorContext(r.Context(), "auth: rendering the sign-out page", "err", err)
	}
}

// logoutNext returns where to go after signing out, as r asks: the form's
// next, else the query's next, else its rd, when SafeNext accepts it (a
// local path, or an https URL on a redirect host); "" when none is given
// or the one given is refused, which means the signed-out page.
func (g *Guard) logoutNext(r *http.Request) string {
	var next string
	if r.Method == http.MethodPost {
		next = r.PostFormValue("next")
	}
	q := r.URL.Query()
	for _, v := range []string{q.Get("next"), q.Get(RedirectParam)} {
		if next == "" {
			next = v
		}
	}
	if next == "" {
		return ""
	}
	if safe := g.SafeNext(next); safe == next {
		return safe
	}
	return ""
}

// SeeOther answers 303 to loc, a target SafeNext accepted. It sets
// Location itself rather than with http.Redirect, which cleans the path
// and could turn an accepted "/./\host" into "/\host", which browsers
// read as another host; bytes outside printable ASCII are percent-encoded
// so that the header stays one clean line.
func SeeOther(w http.ResponseWriter, loc string) {
	var b strings.Builder
	for i := 0; i < len(loc); i++ {
		if c := loc[i]; c <= ' ' || c >= 0x7f {
			fmt.Fprintf(&b, "%%%02X", c)
		} else {
			b.WriteByte(c)
		}
	}
	w.Header().Set("Location", b.String())
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusSeeOther)
}
