package proxy

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/backupweb/backupweb/internal/peer"
)

// setHost chooses the Host the upstream sees: its own (what
// ProxyRequest.SetURL leaves, the default) or, with PassHostHeader, the
// one the client asked for: applications that check Host (Syncthing
// refuses a Host it does not know, against DNS rebinding) or build their
// own absolute URLs from it need the client's.
func setHost(o Options, out, in *http.Request) {
	if o.PassHostHeader {
		out.Host = in.Host
	}
}

// rewriteRedirects rewrites the answer's Location and Content-Location
// when they name the upstream's own address (its scheme, host and port,
// and its path as a prefix) to the client's scheme and host, as nginx's
// default proxy_redirect does: an application that answers
// "Location: http://127.0.0.1:8384/after" sends the browser to
// "https://backups.example.com/after", not to an address only the proxy
// can reach. With Options.PublicURL the scheme and host are its, whatever
// Host the client sent. Relative references and other hosts are left
// alone.
func rewriteRedirects(o Options, resp *http.Response) {
	if !o.RewriteRedirects || resp.Request == nil {
		return
	}
	out := resp.Request
	// The client's Host, as rewrite set it on the upstream's request
	// (from the inbound request, never from the client's own
	// X-Forwarded-Host, which ReverseProxy removed).
	host := out.Header.Get("X-Forwarded-Host")
	if host == "" {
		return
	}
	scheme := "http"
	if peer.Of(out).HTTPS {
		scheme = "https"
	}
	if o.PublicURL != nil {
		scheme, host = o.PublicURL.Scheme, o.PublicURL.Host
	}
	for _, name := range []string{"Location", "Content-Location"} {
		v := resp.Header.Get(name)
		if v == "" {
			continue
		}
		if nv, ok := toClient(o.Upstream, v, scheme, host); ok {
			resp.Header.Set(name, nv)
		}
	}
}

// toClient returns loc with the upstream's address replaced by the
// client's scheme and host, and whether loc named the upstream at all.
func toClient(up *url.URL, loc, scheme, host string) (string, bool) {
	u, err := url.Parse(loc)
	if err != nil || !u.IsAbs() || u.Opaque != "" || u.User != nil {
		return "", false
	}
	if !strings.EqualFold(u.Scheme, up.Scheme) || !sameHostPort(u, up) {
		return "", false
	}
	prefix := strings.TrimSuffix(up.EscapedPath(), "/")
	rest := u.EscapedPath()
	if prefix != "" {
		if rest != prefix && !strings.HasPrefix(rest, prefix+"/") {
			return "", false
		}
		rest = strings.TrimPrefix(rest, prefix)
	}
	if rest == "" {
		rest = "/"
	}
	out := scheme + "://" + host + rest
	if u.RawQuery != "" || u.ForceQuery {
		out += "?" + u.RawQuery
	}
	if u.Fragment != "" {
		out += "#" + u.EscapedFragment()
	}
	return out, true
}

// sameHostPort reports whether a and b name the same host and port, the
// scheme's default port written or not.
func sameHostPort(a, b *url.URL) bool {
	return strings.EqualFold(a.Hostname(), b.Hostname()) && portOf(a) == portOf(b)
}

func portOf(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	if strings.EqualFold(u.Scheme, "https") {
		return "443"
	}
	return "80"
}
