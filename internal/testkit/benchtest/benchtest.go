// Package benchtest is the one driver of the loopback benchmarks: real
// HTTP requests to a server on 127.0.0.1, which is what a client sees,
// sent the way users load a service: many kept-alive connections in
// parallel (b.RunParallel), Connections of them. Compare a protected route
// with /healthz, with the same route under type none, or with a plain
// net/http server, in the same run, as a ratio of ns/op.
package benchtest

import (
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"testing"
)

// Connections is how many clients send requests at once, each on its own
// kept-alive connection: the 32 of the ratio tool's wrk runs.
const Connections = 32

// Loopback serves h on loopback and runs b.N GETs of path from
// Connections parallel clients, each request adjusted by mod (credentials,
// a cookie) when it is not nil. Every answer must be 200; one request is
// made before the timer starts, so a credential cache is warm.
func Loopback(b *testing.B, h http.Handler, path string, mod func(*http.Request)) {
	b.Helper()
	srv := httptest.NewServer(h)
	defer srv.Close()
	URL(b, srv.Client(), srv.URL, path, mod)
}

// URL is Loopback against a server that already runs at base, with
// client (whose cookie jar, if any, is used; its transport, when an
// *http.Transport, is copied to keep Connections connections alive).
func URL(b *testing.B, client *http.Client, base, path string, mod func(*http.Request)) {
	b.Helper()
	client = pooled(client)
	do := func() error {
		req, _ := http.NewRequest(http.MethodGet, base+path, nil)
		if mod != nil {
			mod(req)
		}
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return &statusError{path: path, code: resp.StatusCode}
		}
		return nil
	}
	if err := do(); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.SetParallelism(max(1, (Connections+runtime.GOMAXPROCS(0)-1)/runtime.GOMAXPROCS(0)))
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := do(); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// pooled returns client with a transport that keeps Connections idle
// connections to one host (net/http keeps 2), so that parallel clients
// reuse their connections instead of opening one per request.
func pooled(client *http.Client) *http.Client {
	t, ok := client.Transport.(*http.Transport)
	if client.Transport == nil {
		t, ok = http.DefaultTransport.(*http.Transport), true
	}
	if !ok {
		return client
	}
	t = t.Clone()
	t.MaxIdleConnsPerHost = 2 * Connections
	t.MaxIdleConns = 4 * Connections
	c := *client
	c.Transport = t
	return &c
}

type statusError struct {
	path string
	code int
}

func (e *statusError) Error() string {
	return "benchtest: GET " + e.path + ": status " + http.StatusText(e.code)
}
