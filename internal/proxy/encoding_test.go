package proxy_test

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"testing"

	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/auth/none"
)

// TestAcceptEncodingAsSent: the upstream sees the client's Accept-Encoding
// as the client sent it, and none when the client sent none (the proxy's
// transport asks for no compression of its own, which it would then have
// to inflate).
func TestAcceptEncodingAsSent(t *testing.T) {
	up := startUpstream(t)
	g := guard(t, up.URL, func(string, *slog.Logger) auth.Provider { return none.Provider{} })
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	for _, tt := range []struct{ sent, want string }{
		{"", ""},
		{"gzip", "gzip"},
		{"br, gzip;q=0.5", "br, gzip;q=0.5"},
	} {
		req, _ := http.NewRequest("GET", g.url+"/protected/echo", nil)
		if tt.sent != "" {
			req.Header.Set("Accept-Encoding", tt.sent)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var s seen
		err = json.NewDecoder(resp.Body).Decode(&s)
		resp.Body.Close()
		if err != nil {
			t.Fatalf("sent %q: %v", tt.sent, err)
		}
		if got := s.Header.Get("Accept-Encoding"); got != tt.want {
			t.Errorf("sent %q: the upstream saw Accept-Encoding %q, want %q", tt.sent, got, tt.want)
		}
	}
}
