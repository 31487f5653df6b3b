package access

import (
	"context"
	"net/http"
	"net/url"
	"strings"
)

// Read returns what r means for a decision: its method, its URL (path and
// query), its host and the methods its headers and query name besides its
// request line (see Overrides). It is the one reader of a request that
// backupweb serves itself (catalog and proxy modes): the rules, a machine
// token's scope, the second-factor and allow_users rules and the
// catalog's hiding all decide on the Target it returns, so that no
// decision reads a spelling another one misses. A forward-authentication
// question is read by ReadForwarded instead. Read is computed once per
// request (package web stores it in the request's context, see
// TargetContextKey) and read back with TargetOf.
func Read(r *http.Request) Target {
	return readHeaders(Target{Method: r.Method, URL: r.URL, Host: r.Host}, r.Header)
}

// ReadForwarded returns what a forward-authentication question means for
// a decision: the method, request target (origin or absolute form, see
// RequestURL) and host a trusted proxy told ("" for each it did not: that
// part is unknown), with the methods that the client's headers h (which
// the proxy passes on the question) and the target's query name besides.
func ReadForwarded(method, uri, host string, h http.Header) Target {
	t := Target{Method: method, Host: host}
	if uri != "" {
		t.URL = RequestURL(uri)
	}
	return readHeaders(t, h)
}

// readHeaders fills in what t's headers h and t's query say beyond the
// request line: the methods of every override spelling (Overrides) and
// a path override header (PathOverride), both read in one pass over the
// headers, since it runs on every request. It is the one place a
// request's headers are read for a decision.
func readHeaders(t Target, h http.Header) Target {
	query := ""
	if t.URL != nil {
		query = t.URL.RawQuery
	}
	for name, values := range h {
		t.Overrides = headerOverrides(t.Overrides, name, values)
		if t.PathOverride == "" {
			t.PathOverride, _ = pathOverrideName(name)
		}
	}
	t.Overrides = queryOverrides(t.Overrides, query)
	return t
}

// Methods returns every method t names: its request line's, upper case,
// and each of its Overrides. An unknown method is "".
func (t Target) Methods() []string {
	out := []string{strings.ToUpper(strings.TrimSpace(t.Method))}
	for _, m := range t.Overrides {
		out = appendNew(out, m)
	}
	return out
}

// WithURL returns t for another URL: the catalog's listing of a folder
// read as the folder it shows. The method, the methods named besides it
// and the host stay t's.
func (t Target) WithURL(u *url.URL) Target {
	t.URL = u
	return t
}

type targetKey struct{}

// TargetContextKey is the context key under which WithTarget stores a
// request's Target. It is exported, like peer.InfoContextKey, so that
// package web's per-request context can answer for it; such a context
// answers with a Target or a *Target.
var TargetContextKey any = targetKey{}

// WithTarget returns r carrying t as what it means for a decision: a
// forward-authentication question carries the request it asks about.
func WithTarget(r *http.Request, t Target) *http.Request {
	return r.WithContext(context.WithValue(r.Context(), targetKey{}, t))
}

// TargetOf returns the Target r carries (WithTarget, or the per-request
// context of package web), or Read(r) for a request that carries none.
func TargetOf(r *http.Request) Target {
	switch v := r.Context().Value(targetKey{}).(type) {
	case Target:
		return v
	case *Target:
		if v != nil {
			return *v
		}
	}
	return Read(r)
}
