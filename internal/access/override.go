package access

import (
	"net/http"
	"net/url"
	"strings"
)

// OverrideHeaders are the request headers by which web frameworks let a
// client name another method than the request line's (Rails, Laravel,
// Symfony, Express's method-override, ASP.NET, Google's APIs): an
// application that honours one serves a POST carrying
// "X-HTTP-Method-Override: DELETE" as a DELETE.
var OverrideHeaders = []string{"X-HTTP-Method-Override", "X-HTTP-Method", "X-Method-Override"}

// OverrideParam is the query parameter that frameworks read the same way
// ("?_method=DELETE"), under any letter case of its name (PHP and some
// routers fold it).
const OverrideParam = "_method"

// Overrides returns the methods, upper case, that a request's headers and
// query name besides its request line: every value of an OverrideHeaders
// header under any spelling of its name (letter case, "_" for "-", as
// WSGI and CGI servers read names), each comma-separated item on its own,
// and every _method parameter of rawQuery (its name decoded and in any
// letter case, "&" and ";" both separating parameters, every repetition
// counted, as the frameworks that honour it read it).
// A form body's _method is not read: the body streams to the application
// unread.
func Overrides(h http.Header, rawQuery string) []string {
	var out []string
	for name, values := range h {
		out = headerOverrides(out, name, values)
	}
	return queryOverrides(out, rawQuery)
}

// headerOverrides appends to out the methods of the header name with
// values if name is one of OverrideHeaders.
func headerOverrides(out []string, name string, values []string) []string {
	if !isOverrideHeader(name) {
		return out
	}
	for _, v := range values {
		out = appendMethods(out, v)
	}
	return out
}

// queryOverrides appends to out the methods of rawQuery's _method
// parameters.
func queryOverrides(out []string, rawQuery string) []string {
	// A name that decodes to _method holds "_" or an escape.
	if !strings.ContainsAny(rawQuery, "_%") {
		return out
	}
	for param := range strings.FieldsFuncSeq(rawQuery, func(c rune) bool { return c == '&' || c == ';' }) {
		key, value, _ := strings.Cut(param, "=")
		if k, err := url.QueryUnescape(key); err != nil || !strings.EqualFold(k, OverrideParam) {
			continue
		}
		if v, err := url.QueryUnescape(value); err == nil {
			value = v
		}
		out = appendMethods(out, value)
	}
	return out
}

// isOverrideHeader reports whether a header name, case-folded and with
// "_" read as "-", is one of OverrideHeaders. It allocates nothing: it
// runs for every header of every guarded request.
func isOverrideHeader(name string) bool {
	if len(name) < len("X-HTTP-Method") || name[0] != 'X' && name[0] != 'x' {
		return false
	}
	for _, o := range OverrideHeaders {
		if foldEqual(name, o) {
			return true
		}
	}
	return false
}

// foldEqual reports whether header names a and b are equal with ASCII
// letter case ignored and "_" read as "-".
func foldEqual(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		if foldByte(a[i]) != foldByte(b[i]) {
			return false
		}
	}
	return true
}

func foldByte(c byte) byte {
	switch {
	case 'A' <= c && c <= 'Z':
		return c + 'a' - 'A'
	case c == '_':
		return '-'
	}
	return c
}

// appendMethods adds the comma-separated methods of v to out, upper case,
// each once.
func appendMethods(out []string, v string) []string {
	for m := range strings.SplitSeq(v, ",") {
		if m = strings.ToUpper(strings.TrimSpace(m)); m != "" {
			out = appendNew(out, m)
		}
	}
	return out
}
