package proxy

import (
	"net/url"
	"testing"
)

func TestToClient(t *testing.T) {
	for _, tt := range []struct {
		upstream, loc, want string
		ok                  bool
	}{
		{"http://127.0.0.1:8384", "http://127.0.0.1:8384/after", "https://app.example.com/after", true},
		{"http://127.0.0.1:8384", "http://127.0.0.1:8384", "https://app.example.com/", true},
		{"http://127.0.0.1:8384", "http://127.0.0.1:8384/a%2Fb?x=1&y=%2F#frag", "https://app.example.com/a%2Fb?x=1&y=%2F#frag", true},
		{"http://localhost:8384", "HTTP://LOCALHOST:8384/x", "https://app.example.com/x", true},
		{"http://app.internal", "http://app.internal:80/x", "https://app.example.com/x", true},
		{"https://app.internal", "https://app.internal:443/x", "https://app.example.com/x", true},
		{"http://127.0.0.1:5000/app/", "http://127.0.0.1:5000/app/after", "https://app.example.com/after", true},
		{"http://127.0.0.1:5000/app", "http://127.0.0.1:5000/app", "https://app.example.com/", true},
		{"http://127.0.0.1:5000/app", "http://127.0.0.1:5000/application", "", false}, // not under the prefix
		{"http://127.0.0.1:8384", "https://127.0.0.1:8384/x", "", false},              // another scheme
		{"http://127.0.0.1:8384", "http://127.0.0.1:8385/x", "", false},               // another port
		{"http://127.0.0.1:8384", "http://example.org/x", "", false},                  // another host
		{"http://127.0.0.1:8384", "/relative", "", false},                             // relative: left alone
		{"http://127.0.0.1:8384", "//127.0.0.1:8384/x", "", false},                    // scheme-relative: not absolute
		{"http://127.0.0.1:8384", "http://user@127.0.0.1:8384/x", "", false},          // user info: left alone
		{"http://127.0.0.1:8384", "http://127.0.0.1:8384/%zz", "", false},             // not a URL
	} {
		up, _ := url.Parse(tt.upstream)
		got, ok := toClient(up, tt.loc, "https", "app.example.com")
		if ok != tt.ok || got != tt.want {
			t.Errorf("%s under %s: %q %v, want %q %v", tt.loc, tt.upstream, got, ok, tt.want, tt.ok)
		}
	}
}
