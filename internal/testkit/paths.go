package testkit

import (
	"net/http"
	"net/url"
	"strings"
)

// AmbiguousTarget is a request target that common servers read as a path
// under /admin/ while its plain decoded form is not under /admin/: a rule
// for ^/admin/ must refuse it, and no rule for another path may let it
// through.
type AmbiguousTarget struct {
	// Name says which reading makes it ambiguous.
	Name string
	// Target is the request target as written on the wire.
	Target string
}

// AmbiguousTargets are one of each form of docs/access.md's list of paths
// that read two ways, each read as /admin/users by some server.
var AmbiguousTargets = []AmbiguousTarget{
	{"path parameter (Tomcat, Jetty, Spring)", "/admin;x/users"},
	{"path parameter, ; encoded", "/admin%3bx/users"},
	{"dot segment with a parameter", "/public/..;/admin/users"},
	{"%25, decoded twice", "/%2561dmin/users"},
	{"%25 dot segments", "/public/%252e%252e/admin/users"},
	{"overlong UTF-8 dots", "/public/%c0%ae%c0%ae/admin/users"},
	{"overlong UTF-8 slash", "/admin%c0%afusers"},
	{"full-width dots (NFKC)", "/public/%ef%bc%8e%ef%bc%8e/admin/users"},
	{"two-dot leader (NFKC)", "/public/%e2%80%a5/admin/users"},
	{"full-width solidus (NFKC)", "/admin%ef%bc%8fusers"},
	{"NUL", "/adm%00in/users"},
	{"control character", "/adm%09in/users"},
	{"trailing dot (Windows)", "/admin./users"},
	{"trailing space (Windows)", "/admin%20/users"},
	{"encoded backslash", "/admin%5cusers"},
	{"doubled slash", "//admin/users"},
	{"absolute form", "http://backupweb.test/admin;x/users"},
}

// TargetRequest is a request for base's server whose request line carries
// target exactly as written (escapes, dot segments, "//" and the absolute
// form kept). target is trusted test input: NewRequest's error would only
// be a bad base.
func TargetRequest(method, base, target string) *http.Request {
	req, err := http.NewRequest(method, base, nil)
	if err != nil {
		panic(err)
	}
	switch {
	case strings.HasPrefix(target, "http://"):
		// The client writes an opaque "//host/path" as "http://host/path".
		req.URL.Opaque = strings.TrimPrefix(target, "http:")
	case strings.HasPrefix(target, "//"):
		// An opaque "//..." would become the absolute form: a path it is.
		path, query, _ := strings.Cut(target, "?")
		req.URL = &url.URL{Scheme: req.URL.Scheme, Host: req.URL.Host, Path: path, RawQuery: query}
	default:
		req.URL.Opaque, req.URL.RawQuery, _ = strings.Cut(target, "?")
	}
	return req
}
