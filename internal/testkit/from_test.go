package testkit

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestClientFrom: the server sees the address the client leaves from.
func TestClientFrom(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, _, _ := net.SplitHostPort(r.RemoteAddr)
		io.WriteString(w, host)
	}))
	defer srv.Close()
	for _, ip := range []string{"127.0.0.2", "127.0.0.3"} {
		resp, err := ClientFrom(ip).Get(srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(body) != ip {
			t.Errorf("from %s the server saw %q", ip, body)
		}
	}
}
