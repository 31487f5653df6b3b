package oauth

import (
	"net/http"
	"strings"
	"testing"

	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/testkit"
	"github.com/backupweb/backupweb/internal/throttle"
)

// TestLoginBeginsLimited: one address starting sign-ins at /oauth/login
// gets 429 with Retry-After past its limit, while a browser at another
// address signs in through the identity provider as ever.
func TestLoginBeginsLimited(t *testing.T) {
	w := newWorld(t)
	s := w.serve(t, "google", Rule{All: true}, auth.Deps{})
	flood := testkit.ClientFrom("127.0.0.2")
	codes := map[int]int{}
	for range throttle.DefaultRatePerKey + 50 {
		resp, err := flood.Get(s.URL + LoginPath)
		if err != nil {
			t.Fatal(err)
		}
		readBody(t, resp)
		codes[resp.StatusCode]++
		if resp.StatusCode == http.StatusTooManyRequests && resp.Header.Get("Retry-After") == "" {
			t.Fatal("429 without Retry-After")
		}
	}
	if codes[http.StatusFound] != throttle.DefaultRatePerKey || codes[http.StatusTooManyRequests] != 50 {
		t.Fatalf("answers to the flood: %v; want %d redirects, then 429", codes, throttle.DefaultRatePerKey)
	}
	resp, body := w.signIn(t, s, browser(t), "/", "alice")
	if resp.StatusCode != http.StatusOK || resp.Request.URL.Path != "/" || !strings.Contains(body, "alice") {
		t.Fatalf("sign-in from another address during the flood: %d at %s", resp.StatusCode, resp.Request.URL)
	}
}
