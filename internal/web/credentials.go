package web

import (
	"net/http"
	"strings"

	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/refusal"
)

// oneCredential refuses, with 400 (refusal.TwoCredentials) and an
// "auth refused" line of typ, a request that carries more than one
// Authorization header or one header holding more than one credential
// ("Basic x, Bearer y"): backupweb would judge one of them, and a proxy
// or an upstream behind it might read another and see another identity.
// It runs before anything reads the header, in every mode, on every path.
func oneCredential(typ string, errs *refusal.Errors, audit auth.Audit, next http.Handler) http.Handler {
	refuse := SecurityHeaders(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		audit.Refused(r, typ, auth.ReasonTwoCredentials, "")
		errs.Refuse(w, r, refusal.TwoCredentials)
	}))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if v := r.Header["Authorization"]; len(v) > 1 || len(v) == 1 && twoCredentials(v[0]) {
			setRouteLabel(r, "refused")
			refuse.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// twoCredentials reports whether v, one Authorization value, holds more
// than one credential (RFC 9110, section 11.6.2: credentials = auth-scheme
// [ 1*SP ( token68 / #auth-param ) ]). A comma outside a quoted string
// separates list elements; empty elements do not count. Several elements
// are one credential only when its scheme is followed by auth-params
// (name=value, as Digest has) and every later element is an auth-param
// too; anything else after a comma (a second scheme, a token68 after a
// token68) is a second credential.
func twoCredentials(v string) bool {
	var elems []string
	for _, e := range splitList(v) {
		if e = strings.Trim(e, " \t"); e != "" {
			elems = append(elems, e)
		}
	}
	if len(elems) < 2 {
		return false
	}
	_, rest, ok := strings.Cut(elems[0], " ")
	if !ok || !isAuthParam(strings.TrimLeft(rest, " ")) {
		return true
	}
	for _, e := range elems[1:] {
		if !isAuthParam(e) {
			return true
		}
	}
	return false
}

// splitList splits v at the commas outside quoted strings (a backslash
// inside one escapes the next character).
func splitList(v string) []string {
	var out []string
	start, quoted := 0, false
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case quoted && c == '\\':
			i++
		case c == '"':
			quoted = !quoted
		case !quoted && c == ',':
			out = append(out, v[start:i])
			start = i + 1
		}
	}
	return append(out, v[start:])
}

// isAuthParam reports whether e starts as an auth-param does: a token,
// optional blanks, "=" and a value. A token68 ends in "=" padding only,
// so "abc=" and "abc==" are not auth-params.
func isAuthParam(e string) bool {
	n := 0
	for n < len(e) && isTokenChar(e[n]) {
		n++
	}
	if n == 0 {
		return false
	}
	rest := strings.TrimLeft(e[n:], " \t")
	if !strings.HasPrefix(rest, "=") {
		return false
	}
	rest = strings.TrimLeft(rest[1:], " \t")
	return rest != "" && rest[0] != '='
}

// isTokenChar reports whether c may appear in a token (RFC 9110 tchar).
func isTokenChar(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}
