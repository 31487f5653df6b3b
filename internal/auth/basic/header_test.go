package basic

import (
	"encoding/base64"
	"errors"
	"strings"
	"testing"
)

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

func TestParseAuthorization(t *testing.T) {
	tests := []struct {
		name, header string
		user, pass   string
		err          error
	}{
		{"ok", "Basic " + b64("alice:secret"), "alice", "secret", nil},
		{"scheme any case", "bAsIc " + b64("alice:secret"), "alice", "secret", nil},
		{"several spaces", "Basic    " + b64("alice:secret") + "  ", "alice", "secret", nil},
		{"colon in password", "Basic " + b64("alice:a:b:c"), "alice", "a:b:c", nil},
		{"empty password", "Basic " + b64("alice:"), "alice", "", nil},
		{"empty user", "Basic " + b64(":pw"), "", "pw", nil},
		{"no padding", "Basic " + strings.TrimRight(b64("alice:secre"), "="), "alice", "secre", nil},
		{"utf-8", "Basic " + b64("jörg:pässwörd"), "jörg", "pässwörd", nil},
		{"missing", "", "", "", ErrNoCredentials},
		{"other scheme", "Bearer abc", "", "", ErrNoCredentials},
		{"scheme only", "Basic", "", "", ErrMalformed},
		{"scheme and space", "Basic ", "", "", ErrMalformed},
		{"not base64", "Basic !!!notbase64", "", "", ErrMalformed},
		{"no colon", "Basic " + b64("alicesecret"), "", "", ErrMalformed},
		{"too long", "Basic " + strings.Repeat("A", maxHeader+4), "", "", ErrMalformed},
		{"basicfoo is not basic", "Basicfoo " + b64("a:b"), "", "", ErrNoCredentials},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			user, pass, err := ParseAuthorization(tt.header)
			if !errors.Is(err, tt.err) || (err == nil && tt.err != nil) {
				t.Fatalf("err = %v, want %v", err, tt.err)
			}
			if user != tt.user || pass != tt.pass {
				t.Fatalf("got %q:%q, want %q:%q", user, pass, tt.user, tt.pass)
			}
		})
	}
}

// FuzzParseAuthorization checks that no header makes the parser panic, that
// it answers exactly one of credentials or an error, and that encoding the
// credentials it returns parses back to the same pair.
func FuzzParseAuthorization(f *testing.F) {
	for _, s := range []string{"", "Basic " + b64("alice:secret"), "Basic", "Basic ====", "basic Og==", "Bearer x", "Basic " + b64("a:b:c")} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, header string) {
		user, pass, err := ParseAuthorization(header)
		if err != nil {
			if user != "" || pass != "" {
				t.Fatalf("error %v with credentials %q:%q", err, user, pass)
			}
			if !errors.Is(err, ErrNoCredentials) && !errors.Is(err, ErrMalformed) {
				t.Fatalf("unexpected error %v", err)
			}
			return
		}
		if strings.Contains(user, ":") {
			t.Fatalf("user %q holds a colon", user)
		}
		enc := b64(user + ":" + pass)
		if len(enc) > maxHeader {
			return
		}
		u2, p2, err := ParseAuthorization("Basic " + enc)
		if err != nil || u2 != user || p2 != pass {
			t.Fatalf("round trip of %q:%q gave %q:%q, %v", user, pass, u2, p2, err)
		}
	})
}
