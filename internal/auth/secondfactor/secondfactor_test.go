package secondfactor_test

import (
	"strings"
	"testing"

	"github.com/backupweb/backupweb/internal/auth/secondfactor"
)

// TestParseMode reads every spelling of second_factor and refuses others.
func TestParseMode(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want secondfactor.Mode
		ok   bool
	}{
		{"", secondfactor.Off, true},
		{"off", secondfactor.Off, true},
		{" Optional ", secondfactor.Optional, true},
		{"REQUIRED", secondfactor.Required, true},
		{"on", secondfactor.Off, false},
		{"totp", secondfactor.Off, false},
	} {
		got, err := secondfactor.ParseMode(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("ParseMode(%q) = %v, %v; want %v, ok %v", tt.in, got, err, tt.want, tt.ok)
		}
		if tt.ok && tt.in != "" && !strings.EqualFold(strings.TrimSpace(tt.in), got.String()) {
			t.Errorf("ParseMode(%q).String() = %q", tt.in, got.String())
		}
	}
}

// TestNewRefusesMissingParts: a step without the parts it is handed is
// never made (it would answer a sign-in with a nil dereference).
func TestNewRefusesMissingParts(t *testing.T) {
	if s, err := secondfactor.New(secondfactor.Config{Type: "flask-login"}); err == nil || s != nil {
		t.Fatalf("New with nothing: %v, %v; want an error", s, err)
	}
}
