package web

import (
	"net"
	"net/http"
	"net/url"
)

// StrictTransport wraps next so that every answer to a request that came
// over TLS carries Strict-Transport-Security with value ([server] hsts,
// on by default when the program serves HTTPS itself). Behind a TLS proxy
// (plain requests) it adds nothing: HSTS is the proxy's there.
func StrictTransport(next http.Handler, value string) http.Handler {
	v := []string{value}[:1:1]
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.TLS != nil {
			w.Header()["Strict-Transport-Security"] = v
		}
		next.ServeHTTP(w, r)
	})
}

// RedirectHTTPS answers every request with 308 to the same path and query
// over https ([server] redirect_http_listen): at origin (public_url) when
// set, else at the request's host on httpsPort ("443" is left out of the
// URL). A request without a usable host gets 400: there is nowhere to
// send it. The method and body are kept by the client (308), and nothing
// else is ever served on plain HTTP.
func RedirectHTTPS(origin *url.URL, httpsPort string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		target := url.URL{Scheme: "https", Path: r.URL.Path, RawPath: r.URL.RawPath, RawQuery: r.URL.RawQuery}
		if origin != nil {
			target.Host = origin.Host
		} else {
			host := r.Host
			if h, _, err := net.SplitHostPort(r.Host); err == nil {
				host = h
			}
			if host == "" || (&url.URL{Host: host}).Hostname() == "" {
				http.Error(w, "a request over plain HTTP is answered only with a redirect to https, which needs a Host header", http.StatusBadRequest)
				return
			}
			if httpsPort != "443" && httpsPort != "" {
				host = net.JoinHostPort(host, httpsPort)
			} else if ip := net.ParseIP(host); ip != nil && ip.To4() == nil {
				host = "[" + host + "]"
			}
			target.Host = host
		}
		if target.Path == "" {
			target.Path = "/"
		}
		w.Header().Set("Location", target.String())
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusPermanentRedirect)
		if r.Method != http.MethodHead {
			_, _ = w.Write([]byte("This service is served over https: " + target.String() + "\n"))
		}
	})
}
