package access

import (
	"net/url"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// ambiguousForms are paths that a common server reads as /admin/users
// while their decoded form does not start with /admin/, each with the
// reading that does. Sent as written (escapes and all).
var ambiguousForms = []struct {
	name, raw, reading string
}{
	{"path parameter", "/admin;x/users", "/admin/users"},
	{"path parameter, encoded ;", "/admin%3bx/users", "/admin/users"},
	{"dot segment with a parameter", "/public/..;/admin/users", "/admin/users"},
	{"%25: decoded twice", "/%2561dmin/users", "/admin/users"},
	{"%25 dot segments", "/public/%252e%252e/admin/users", "/admin/users"},
	{"%25 three times", "/public/%25252e%25252e/admin/users", "/admin/users"},
	{"overlong dots", "/public/%c0%ae%c0%ae/admin/users", "/admin/users"},
	{"overlong slash", "/admin%c0%afusers", "/admin/users"},
	{"three-byte overlong dots", "/public/%e0%80%ae%e0%80%ae/admin/users", "/admin/users"},
	{"stray byte", "/adm%ffin/users", "/admin/users"},
	{"full-width dots", "/public/%ef%bc%8e%ef%bc%8e/admin/users", "/admin/users"},
	{"one-dot leaders", "/public/%e2%80%a4%e2%80%a4/admin/users", "/admin/users"},
	{"two-dot leader", "/public/%e2%80%a5/admin/users", "/admin/users"},
	{"full-width solidus", "/admin%ef%bc%8fusers", "/admin/users"},
	{"full-width semicolon", "/admin%ef%bc%9bx/users", "/admin/users"},
	{"NUL", "/adm%00in/users", "/admin/users"},
	{"tab", "/adm%09in/users", "/admin/users"},
	{"C1 control", "/adm%c2%85in/users", "/admin/users"},
	{"trailing dot", "/admin./users", "/admin/users"},
	{"trailing space", "/admin%20/users", "/admin/users"},
	{"trailing no-break space", "/admin%c2%a0/users", "/admin/users"},
	{"backslash", "/admin%5cusers", "/admin/users"},
	{"doubled slash", "//admin/users", "/admin/users"},
	{"dots only", "/public/.../admin/users", "/admin/users"},
}

func TestAmbiguousFormsReadings(t *testing.T) {
	for _, tt := range ambiguousForms {
		t.Run(tt.name, func(t *testing.T) {
			u, err := url.ParseRequestURI(tt.raw)
			if err != nil {
				t.Fatal(err)
			}
			if p, ok := Canonical(u); ok {
				t.Fatalf("%q is canonical (%q)", tt.raw, p)
			}
			got, canonical := Readings(u)
			if canonical || !slices.Contains(got, tt.reading) {
				t.Errorf("%q: readings %q (canonical %v), want %q among them", tt.raw, got, canonical, tt.reading)
			}
			if strings.HasPrefix(u.Path, "/admin/") {
				t.Errorf("%q: the decoded path %q already starts with /admin/: the form tests nothing", tt.raw, u.Path)
			}
		})
	}
}

// TestAmbiguousFormsDecide: no form escapes a deny rule for a signed-in
// user, and none is anonymous or let through to a sign-in before one.
func TestAmbiguousFormsDecide(t *testing.T) {
	rs := mustRules(t, false, "GET ^/public/ anonymous", "* ^/admin/ deny")
	for _, tt := range ambiguousForms {
		t.Run(tt.name, func(t *testing.T) {
			tg := target("GET", tt.raw, "h")
			if d := rs.Decide(tg, carol); d.Permits(carol) || d.Policy != Deny || d.Reason != ReasonAmbiguous {
				t.Errorf("signed in: %+v, want a refusal as ambiguous", d)
			}
			if d := rs.Decide(tg, nobody); d.Permits(nobody) || d.Reason != ReasonAmbiguous {
				t.Errorf("before sign-in: %+v, want a refusal as ambiguous", d)
			}
		})
	}
}

// TestCanonicalKeepsPlainPaths: what is no trick stays canonical.
func TestCanonicalKeepsPlainPaths(t *testing.T) {
	for _, raw := range []string{"/", "/admin/users", "/public/app.js", "/a/b/", "/caf%c3%a9", "/%e2%82%ac/x", "/a.b/c", "/.well-known/x", "/a%20b", "/x-y_z~"} {
		u, err := url.ParseRequestURI(raw)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := Canonical(u); !ok {
			t.Errorf("%q is not canonical", raw)
		}
	}
}

// TestFold: the compatibility fold covers the dot-like, slash-like and
// space-like code points and leaves letters alone; every entry folds to
// path punctuation only.
func TestFold(t *testing.T) {
	for in, want := range map[string]string{
		"\uff0e\uff0e": "..", "\u2024": ".", "\u2025": "..", "\u2026": "...", "\ufe52": ".", "\ufe30": "..",
		"a\uff0fb": "a/b", "a\uff3cb": `a\b`, "a\u037eb": "a;b", "\uff05": "%", "a\u3000": "a ", "a\u00a0": "a ",
		"\uff41": "\uff41", "caf\u00e9": "caf\u00e9",
	} {
		if got := fold(in); got != want {
			t.Errorf("fold(%q) = %q, want %q", in, got, want)
		}
	}
	for r, f := range compat {
		if r < 0x80 || !utf8.ValidRune(r) || strings.Trim(f, `./\;% `) != "" {
			t.Errorf("compat[%U] = %q: not a non-ASCII code point folding to path punctuation", r, f)
		}
	}
}

// TestReadingsBounded: a path that combines every trick has a bounded
// number of readings.
func TestReadingsBounded(t *testing.T) {
	u, err := url.ParseRequestURI("/a%2525c0%c0%ae%00%09%ef%bc%8e%5c.%20;x/../%e2%80%a5/admin")
	if err != nil {
		t.Fatal(err)
	}
	got, _ := Readings(u)
	if len(got) < 10 || len(got) > 289 {
		t.Errorf("%d readings, want between 10 and 289", len(got))
	}
}
