package access

import (
	"net/url"
	"testing"
)

// FuzzRule feeds ParseRule arbitrary rule values and Decide arbitrary
// request paths: neither may panic, a parsed rule keeps an anchored
// pattern, and a path that is not canonical is never let through without
// sign-in by an anonymous rule that its clean form would not match.
func FuzzRule(f *testing.F) {
	seeds := []struct{ rule, path string }{
		{"GET ^/status$ anonymous", "/status"},
		{"* ^/admin/ deny", "/x/../admin/y"},
		{"GET,HEAD ^/api/ allow user:alice, group:ops", "/api//backups"},
		{"POST (?i)^/Admin second_factor", "/ADMIN%2fx"},
		{"* ^/ allow", "/%2e%2e/etc"},
		{"GET ^/a\\b anonymous", "/a\\b"},
		{"* ^/ anonymous", "/;x=1/..;/admin"},
		{"GET [ allow", "/"},
		{"* ^/admin/ deny", "/admin;x/users"},
		{"* ^/admin/ deny", "/public/%252e%252e/admin/users"},
		{"* ^/admin/ deny", "/public/%c0%ae%c0%ae/admin/%e0%80%af%f8%80%80%80%ae"},
		{"GET ^/public/ anonymous", "/public/%ef%bc%8e%ef%bc%8e/admin%00x%09/..%20/a./"},
	}
	for _, s := range seeds {
		f.Add(s.rule, s.path)
	}
	f.Fuzz(func(t *testing.T, value, rawPath string) {
		r, err := ParseRule("rule1", value, true)
		if err != nil {
			return
		}
		if r.Pattern == nil {
			t.Fatalf("ParseRule(%q) gave no pattern", value)
		}
		u, err := url.Parse(rawPath)
		if err != nil || u.Path == "" {
			return
		}
		if readings, _ := Readings(u); len(readings) > 289 {
			t.Fatalf("path %q has %d readings", u.Path, len(readings))
		}
		rs := &Rules{List: []Rule{r}}
		d := rs.Decide(Target{Method: "GET", URL: u}, Who{})
		if d.Policy == Anonymous && !r.Pattern.MatchString(u.Path) {
			t.Fatalf("%q: path %q let through anonymously though the pattern does not match it", value, u.Path)
		}
	})
}
