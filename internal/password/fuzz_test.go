package password

import (
	"errors"
	"testing"

	"golang.org/x/crypto/bcrypt"
)

// FuzzParseHash checks that ParseHash never panics, that everything it
// accepts is also readable by bcrypt with the same cost, and that every
// refusal wraps ErrMalformedHash. Seeds live in testdata/fuzz/FuzzParseHash
// as well as below.
func FuzzParseHash(f *testing.F) {
	for _, s := range []string{
		"",
		shapeOK,
		"$2y$12$5TCpMK7srQHsaqMCnk1YjetuW9qjEYWkKJlOq4nh4UIjFkp/ja3cO",
		"$2x$04$" + shapeOK[7:],
		"$2b$99$" + shapeOK[7:],
		"$2b$-1$" + shapeOK[7:],
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		cost, err := ParseHash(s)
		if err != nil {
			if !errors.Is(err, ErrMalformedHash) {
				t.Fatalf("refusal %v does not wrap ErrMalformedHash", err)
			}
			return
		}
		if len(s) != 60 || cost < MinCost || cost > MaxCost {
			t.Fatalf("accepted %q with cost %d", s, cost)
		}
		bc, err := bcrypt.Cost([]byte(s))
		if err != nil || bc != cost {
			t.Fatalf("bcrypt.Cost = %d, %v; ParseHash said %d", bc, err, cost)
		}
	})
}
