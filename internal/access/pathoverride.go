package access

import "net/http"

// PathOverrideHeaders are the request headers by which some servers and
// frameworks let a client name another path than the request line's:
// IIS's URL Rewrite module and the frameworks that read it (older Symfony
// and Zend, some Java ones) serve "GET /public/health" carrying
// "X-Original-URL: /admin" as /admin. The rules judge the request line's
// path, so these never reach an application from the built-in proxy, and
// a forward-authentication question carrying one is refused. Their
// spellings are read as the method-override headers' are (letter case,
// "_" for "-"). X-Original-URI, which the documented nginx snippet sets
// to the request line's own target, is not one of them.
var PathOverrideHeaders = []string{"X-Original-URL", "X-Rewrite-URL", "X-Override-URL"}

// IsPathOverride reports whether a header name, case-folded and with "_"
// read as "-", is one of PathOverrideHeaders. It allocates nothing: it
// runs for every header of every proxied request.
func IsPathOverride(name string) bool {
	if name == "" || name[0] != 'X' && name[0] != 'x' {
		return false
	}
	for _, o := range PathOverrideHeaders {
		if foldEqual(name, o) {
			return true
		}
	}
	return false
}

// PathOverride returns the entry of PathOverrideHeaders that a header of
// h spells, and whether there is one. A request that carries one names two
// paths.
func PathOverride(h http.Header) (string, bool) {
	for name := range h {
		if o, ok := pathOverrideName(name); ok {
			return o, true
		}
	}
	return "", false
}

// pathOverrideName returns the entry of PathOverrideHeaders that the
// header name spells, and whether it spells one.
func pathOverrideName(name string) (string, bool) {
	if !IsPathOverride(name) {
		return "", false
	}
	for _, o := range PathOverrideHeaders {
		if foldEqual(name, o) {
			return o, true
		}
	}
	return "", false
}
