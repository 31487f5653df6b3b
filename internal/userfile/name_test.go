package userfile

import (
	"errors"
	"strings"
	"testing"
)

func TestValidName(t *testing.T) {
	tests := []struct {
		name string
		want string // "" when valid, else the reason after "invalid user name: "
	}{
		{"alice", ""},
		{"alice.smith@example.com", ""},
		{"a-b_c+d", ""},
		{"Émilie", ""},
		{"用户", ""},
		{"pass#word", ""},
		{strings.Repeat("n", MaxNameLen), ""},
		{"", "it is empty"},
		{strings.Repeat("n", MaxNameLen+1), "it is longer than 256 bytes"},
		{"al\xffce", "it is not valid UTF-8"},
		{"#alice", "it starts with '#', which marks a comment line"},
		{"ali:ce", "it contains ':', the field separator"},
		{"ali ce", "it contains whitespace"},
		{" alice", "it contains whitespace"},
		{"alice\t", "it contains whitespace"},
		{"alice\n", "it contains whitespace"},
		{"ali\u00a0ce", "it contains whitespace"},
		{"ali\u2028ce", "it contains whitespace"},
		{"ali\x00ce", "it contains a control character"},
		{"ali\x1bce", "it contains a control character"},
		{"ali\x7fce", "it contains a control character"},
		{"ali\u0085ce", "it contains whitespace"},
		{"ali\u200bce", "it contains an invisible formatting character"},
		{"ali\u202ece", "it contains an invisible formatting character"},
		{"\ufeffalice", "it contains an invisible formatting character"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := ValidName(tt.name)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("ValidName(%q) = %v, want nil", tt.name, err)
				}
				return
			}
			if !errors.Is(err, ErrInvalidName) {
				t.Fatalf("ValidName(%q) = %v, want ErrInvalidName", tt.name, err)
			}
			if got, want := err.Error(), "invalid user name: "+tt.want; got != want {
				t.Errorf("ValidName(%q) = %q, want %q", tt.name, got, want)
			}
		})
	}
}

// TestLogName: a name is logged whole up to MaxNameLen bytes, and a longer
// one is cut at a character boundary at or below it.
func TestLogName(t *testing.T) {
	long := strings.Repeat("a", MaxNameLen-1) + "é" + "tail" // é straddles the limit
	for _, tc := range []struct{ in, want string }{
		{"alice", "alice"},
		{"", ""},
		{strings.Repeat("b", MaxNameLen), strings.Repeat("b", MaxNameLen)},
		{strings.Repeat("b", MaxNameLen+1), strings.Repeat("b", MaxNameLen)},
		{long, strings.Repeat("a", MaxNameLen-1)},
	} {
		if got := LogName(tc.in); got != tc.want {
			t.Errorf("LogName(%d bytes) = %d bytes, want %d", len(tc.in), len(got), len(tc.want))
		}
	}
}
