package access

import (
	"net/url"
	"path"
	"strings"
)

// Readings returns the paths an application behind backupweb could take
// u's path to mean, and whether it is in canonical form (see Canonical).
// A canonical path has one reading, itself. Any other path has several,
// all decoded (%2F read as a slash, %2E%2E as ..): as decoded; with dot
// segments resolved and doubled slashes merged (path.Clean, a final slash
// kept); the same after reading backslashes as slashes; and the same again
// after dropping path parameters (";jsessionid=..", so "/a/..;/b" is
// "/b", as Tomcat reads it). Rules must decide every reading alike (see
// Rules.Decide), so that "/public/../admin" can never escape a rule for
// ^/admin nor borrow one for ^/public. The query and fragment are never
// part of a path. An opaque or relative path has no reading.
func Readings(u *url.URL) (paths []string, canonical bool) {
	if p, ok := Canonical(u); ok {
		return []string{p}, true
	}
	p := u.Path
	if u.Opaque != "" || p == "" || p[0] != '/' {
		return nil, false
	}
	slashed := strings.ReplaceAll(p, `\`, "/")
	for _, q := range []string{p, cleanPath(p), cleanPath(slashed), cleanPath(dropParams(slashed))} {
		paths = appendNew(paths, q)
	}
	return paths, false
}

// cleanPath is path.Clean keeping a final slash.
func cleanPath(p string) string {
	c := path.Clean(p)
	if strings.HasSuffix(p, "/") && c != "/" {
		c += "/"
	}
	return c
}

// dropParams removes every segment's path parameters (";x=y").
func dropParams(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i], _, _ = strings.Cut(s, ";")
	}
	return strings.Join(segs, "/")
}

// RequestURL reads the path of a forwarded request's URI (X-Forwarded-Uri:
// path, query and perhaps a fragment, as the client sent them). It returns
// nil when uri is not an absolute path: the path is then unknown.
func RequestURL(uri string) *url.URL {
	if !strings.HasPrefix(uri, "/") {
		return nil
	}
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "" || u.Host != "" || u.Opaque != "" {
		return nil
	}
	return &url.URL{Path: u.Path, RawPath: u.RawPath}
}
