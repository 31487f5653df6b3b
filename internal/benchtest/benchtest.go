// Package benchtest is the one driver of the loopback benchmarks: real
// HTTP requests over a kept-alive connection to an httptest server on
// 127.0.0.1, which is what a client sees. Compare a protected route with
// /healthz, or with the same route under type none, in the same run.
package benchtest

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

// Loopback serves h on loopback and runs b.N GETs of path, each adjusted
// by mod (credentials, a cookie) when it is not nil. Every answer must be
// 200; one request is made before the timer starts, so a credential cache
// or a connection is warm.
func Loopback(b *testing.B, h http.Handler, path string, mod func(*http.Request)) {
	b.Helper()
	srv := httptest.NewServer(h)
	defer srv.Close()
	URL(b, srv.Client(), srv.URL, path, mod)
}

// URL is Loopback against a server that already runs at base, with
// client (whose cookie jar, if any, is used).
func URL(b *testing.B, client *http.Client, base, path string, mod func(*http.Request)) {
	b.Helper()
	do := func() {
		req, _ := http.NewRequest(http.MethodGet, base+path, nil)
		if mod != nil {
			mod(req)
		}
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("GET %s: status %d", path, resp.StatusCode)
		}
	}
	do()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		do()
	}
}
