package web

import (
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/refusal"
)

// contentSecurityPolicy is sent with every response. The pages use no
// scripts, no inline styles and nothing from other sites, so the policy
// allows only our own stylesheet and images, forms posting to ourselves, no
// framing and no <base>.
const contentSecurityPolicy = "default-src 'none'; style-src 'self'; img-src 'self'; " +
	"form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// SecurityHeaders is the middleware that sets the headers every response
// of the program carries, whatever writes it; a host application that
// mounts a session type's pages wraps them with it too: the Content-Security-Policy, X-Content-Type-Options: nosniff,
// Referrer-Policy: no-referrer (download links hold backup names) and
// X-Frame-Options: DENY for browsers without frame-ancestors. It does not
// set Strict-Transport-Security: behind a TLS proxy HSTS is the proxy's;
// when the program serves HTTPS itself, StrictTransport sets it.
func SecurityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		setSecurityHeaders(w.Header())
		next.ServeHTTP(w, r)
	})
}

// SecurityHeadersFor is SecurityHeaders for the pages of provider p: when
// p's sign-out leads on to another site (auth.FormTargeter), the
// policy's form-action names those origins too, so that the browser
// follows the sign-out's redirect there.
func SecurityHeadersFor(p auth.Provider, next http.Handler) http.Handler {
	ft, ok := p.(auth.FormTargeter)
	if !ok || len(ft.FormTargets()) == 0 {
		return SecurityHeaders(next)
	}
	csp := []string{strings.Replace(contentSecurityPolicy, "form-action 'self'", "form-action 'self' "+strings.Join(ft.FormTargets(), " "), 1)}[:1:1]
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		setSecurityHeaders(h)
		h["Content-Security-Policy"] = csp
		next.ServeHTTP(w, r)
	})
}

// The security headers' values, built once. Each slice has its capacity
// cut to its length, so that a handler's Header().Add of the same name
// copies it instead of writing into the shared array; nothing in the
// program changes a header value in place.
var (
	cspValue        = []string{contentSecurityPolicy}[:1:1]
	nosniffValue    = []string{"nosniff"}[:1:1]
	noReferrerValue = []string{"no-referrer"}[:1:1]
	frameDenyValue  = []string{"DENY"}[:1:1]
	noStoreValue    = []string{"no-store"}[:1:1] // Cache-Control
)

// setSecurityHeaders sets the security headers on h under their canonical
// names, as Header().Set would, without allocating per response.
func setSecurityHeaders(h http.Header) {
	h["Content-Security-Policy"] = cspValue
	h["X-Content-Type-Options"] = nosniffValue
	h["Referrer-Policy"] = noReferrerValue
	h["X-Frame-Options"] = frameDenyValue
}

// apiHeaders trims the security headers SecurityHeaders set to what a
// successful JSON answer needs: X-Content-Type-Options: nosniff stays (no
// browser may take the body for a page or a script); the
// Content-Security-Policy, Referrer-Policy and X-Frame-Options govern a
// document a browser renders, which JSON never is, and would cost every
// answer about 150 bytes to write and to parse. Refusals and pages keep
// every header. It also dates the answer (httpDate): its callers write it
// at once.
func apiHeaders(h http.Header) {
	delete(h, "Content-Security-Policy")
	delete(h, "Referrer-Policy")
	delete(h, "X-Frame-Options")
	h["Date"] = httpDate(time.Now())
}

// noBodyHeaders removes every security header SecurityHeaders set, for a
// successful answer without a body that only a proxy reads (forward
// authentication's 200).
func noBodyHeaders(h http.Header) {
	apiHeaders(h)
	delete(h, "X-Content-Type-Options")
}

// CrossOrigin is the middleware that refuses, through errs (403, the
// error page or JSON), a state-changing request (any method but GET, HEAD,
// OPTIONS) that a browser marks as coming from another site
// (Sec-Fetch-Site, or an Origin that does not match Host): Go's
// http.CrossOriginProtection. Requests without those headers, from scripts
// and curl, pass. It stands beside the CSRF tokens of every form.
func CrossOrigin(errs *refusal.Errors) func(http.Handler) http.Handler {
	cop := http.NewCrossOriginProtection()
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		errs.Refuse(w, r, refusal.CrossOrigin)
	}))
	return cop.Handler
}

// writerOnly hides every method but Write, so io.Copy does not call back
// into a ReadFrom that delegates to it.
type writerOnly struct{ io.Writer }
