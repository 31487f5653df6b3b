package password

import (
	"errors"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"
)

// A real-looking hash used only for its shape: "$2b$04$" plus 53 characters.
const shapeOK = "$2b$04$abcdefghijklmnopqrstuuABCDEFGHIJKLMNOPQRSTUVWXYZ01234"

func TestParseHash(t *testing.T) {
	tests := []struct {
		name     string
		in       string
		wantCost int
		wantErr  string // substring of the error; "" means accepted
	}{
		{"2a", "$2a$04$" + shapeOK[7:], 4, ""},
		{"2b", shapeOK, 4, ""},
		{"2y", "$2y$31$" + shapeOK[7:], 31, ""},
		{"cost 12", "$2b$12$" + shapeOK[7:], 12, ""},
		{"empty", "", 0, "exactly 60 characters long"},
		{"plain password", "hunter2", 0, "exactly 60 characters long"},
		{"one short", shapeOK[:59], 0, "exactly 60 characters long"},
		{"trailing newline", shapeOK[:59] + "\n", 0, "outside bcrypt's base-64 alphabet"},
		{"trailing space", shapeOK + " ", 0, "exactly 60 characters long"},
		{"2x variant", "$2x$04$" + shapeOK[7:], 0, "variant is not supported"},
		{"2 without minor", "$2$04$" + shapeOK[7:] + "a", 0, "bcrypt prefix"},
		{"md5 crypt", "$1$" + strings.Repeat("a", 57), 0, "bcrypt prefix"},
		{"argon2 shape", "$argon2id$v=19$" + strings.Repeat("a", 45), 0, "bcrypt prefix"},
		{"no leading dollar", "x2b$04$" + shapeOK[7:], 0, "bcrypt prefix"},
		{"cost 03", "$2b$03$" + shapeOK[7:], 0, "cost 3 is outside"},
		{"cost 32", "$2b$32$" + shapeOK[7:], 0, "cost 32 is outside"},
		{"cost not digits", "$2b$1a$" + shapeOK[7:], 0, "two digits"},
		{"cost one digit", "$2b$4$" + shapeOK[7:] + "a", 0, "two digits"},
		{"bad alphabet", "$2b$04$" + strings.Repeat("+", 53), 0, "alphabet"},
		{"nul byte", "$2b$04$" + shapeOK[7:59] + "\x00", 0, "alphabet"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cost, err := ParseHash(tt.in)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("ParseHash: %v", err)
				}
				if cost != tt.wantCost {
					t.Fatalf("cost = %d, want %d", cost, tt.wantCost)
				}
				if !IsBcrypt(tt.in) {
					t.Fatal("IsBcrypt = false for an accepted hash")
				}
				return
			}
			if err == nil {
				t.Fatalf("ParseHash accepted %q", tt.in)
			}
			if !errors.Is(err, ErrMalformedHash) {
				t.Errorf("error %v does not wrap ErrMalformedHash", err)
			}
			if !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("error %q does not contain %q", err, tt.wantErr)
			}
			if !strings.Contains(err.Error(), "$2a$, $2b$ or $2y$") {
				t.Errorf("error %q does not name the supported kinds", err)
			}
			if len(tt.in) > 8 && strings.Contains(err.Error(), tt.in[7:]) {
				t.Errorf("error %q echoes the value", err)
			}
			if IsBcrypt(tt.in) {
				t.Error("IsBcrypt = true for a refused value")
			}
		})
	}
}

func TestHash(t *testing.T) {
	tests := []struct {
		name    string
		pw      []byte
		cost    int
		wantErr error
	}{
		{"empty", nil, MinCost, nil},
		{"ordinary", []byte("s3cret-Backup!"), MinCost, nil},
		{"72 bytes", []byte(strings.Repeat("p", MaxLen)), MinCost, nil},
		{"73 bytes", []byte(strings.Repeat("p", MaxLen+1)), MinCost, ErrTooLong},
		{"cost too low", []byte("x"), MinCost - 1, nil},
		{"cost too high", []byte("x"), MaxCost + 1, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := Hash(tt.pw, tt.cost)
			if tt.cost < MinCost || tt.cost > MaxCost {
				if err == nil || !strings.Contains(err.Error(), "cost") {
					t.Fatalf("Hash with cost %d: err = %v, want a cost error", tt.cost, err)
				}
				return
			}
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Hash: err = %v, want %v", err, tt.wantErr)
			}
			if err != nil {
				return
			}
			cost, err := ParseHash(h)
			if err != nil || cost != tt.cost {
				t.Fatalf("ParseHash(Hash) = %d, %v; want %d", cost, err, tt.cost)
			}
			if err := bcrypt.CompareHashAndPassword([]byte(h), tt.pw); err != nil {
				t.Fatalf("bcrypt does not verify Hash's output: %v", err)
			}
		})
	}
}

func TestDecoyHash(t *testing.T) {
	tests := []struct{ in, want int }{
		{MinCost, MinCost},
		{MinCost - 3, MinCost},
		{5, 5},
	}
	for _, tt := range tests {
		h := DecoyHash(tt.in)
		cost, err := ParseHash(h)
		if err != nil {
			t.Fatalf("DecoyHash(%d) is not valid: %v", tt.in, err)
		}
		if cost != tt.want {
			t.Fatalf("DecoyHash(%d) has cost %d, want %d", tt.in, cost, tt.want)
		}
		if again := DecoyHash(tt.in); again != h {
			t.Fatalf("DecoyHash(%d) is not memoised", tt.in)
		}
		for _, guess := range []string{"", "password", "decoy"} {
			if bcrypt.CompareHashAndPassword([]byte(h), []byte(guess)) == nil {
				t.Fatalf("DecoyHash(%d) matches %q", tt.in, guess)
			}
		}
	}
	if DecoyHash(MinCost) == DecoyHash(5) {
		t.Fatal("different costs share a decoy")
	}
}
