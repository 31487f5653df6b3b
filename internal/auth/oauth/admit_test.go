package oauth

import (
	"errors"
	"testing"
)

func TestRuleAdmit(t *testing.T) {
	domains := Rule{Domains: []string{"example.com", "Other.ORG"}}
	users := Rule{Users: []string{"alice@gmail.com", "Bob@Partner.net"}}
	both := Rule{Domains: []string{"example.com"}, Users: []string{"alice@gmail.com"}}
	all := Rule{All: true}
	tests := []struct {
		name  string
		rule  Rule
		email string
		want  error
	}{
		{"domain", domains, "user@example.com", nil},
		{"domain case-insensitive", domains, "User@EXAMPLE.COM", nil},
		{"second domain, configured in capitals", domains, "x@other.org", nil},
		{"other domain", domains, "user@gmail.com", ErrNotAdmitted},
		{"look-alike prefix", domains, "user@evil-example.com", ErrNotAdmitted},
		{"look-alike suffix", domains, "user@example.com.evil.org", ErrNotAdmitted},
		{"sub-domain is another domain", domains, "user@mail.example.com", ErrNotAdmitted},
		{"domain is not an address", domains, "example.com", ErrBadEmail},
		{"two at signs", domains, "x@evil.com@example.com", ErrBadEmail},
		{"two at signs, admitted user after", users, "x@evil.com@alice@gmail.com", ErrBadEmail},
		{"empty local part", domains, "@example.com", ErrBadEmail},
		{"empty domain", domains, "user@", ErrBadEmail},
		{"empty", domains, "", ErrBadEmail},
		{"space", domains, "user @example.com", ErrBadEmail},
		{"newline", domains, "user@example.com\n", ErrBadEmail},
		{"Kelvin sign is not k", Rule{Domains: []string{"kde.org"}}, "user@\u212ade.org", ErrBadEmail},
		{"user", users, "alice@gmail.com", nil},
		{"user case-insensitive", users, "ALICE@gmail.com", nil},
		{"user configured in capitals", users, "bob@partner.net", nil},
		{"user's domain is not admitted", users, "carol@gmail.com", ErrNotAdmitted},
		{"user is not a prefix match", users, "alice@gmail.com.evil.org", ErrNotAdmitted},
		{"both: by domain", both, "zed@example.com", nil},
		{"both: by user", both, "alice@gmail.com", nil},
		{"both: neither", both, "eve@gmail.com", ErrNotAdmitted},
		{"star admits any address", all, "anyone@anywhere.test", nil},
		{"star still needs an address", all, "a@b@c", ErrBadEmail},
		{"zero rule admits nobody", Rule{}, "user@example.com", ErrNotAdmitted},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.rule.Admit(tt.email); !errors.Is(err, tt.want) {
				t.Fatalf("Admit(%q) = %v, want %v", tt.email, err, tt.want)
			}
		})
	}
}

func TestParseEmail(t *testing.T) {
	tests := []struct {
		in            string
		local, domain string
		ok            bool
	}{
		{"a@b.c", "a", "b.c", true},
		{"first.last+tag@sub.example.com", "first.last+tag", "sub.example.com", true},
		{"a@b@c", "", "", false},
		{"nobody", "", "", false},
		{"a\t@b", "", "", false},
		{string(make([]byte, 250)) + "@b.cd", "", "", false},
	}
	for _, tt := range tests {
		local, domain, err := ParseEmail(tt.in)
		if (err == nil) != tt.ok || local != tt.local || domain != tt.domain {
			t.Errorf("ParseEmail(%q) = %q, %q, %v", tt.in, local, domain, err)
		}
	}
}

func TestCheckDomainAndUser(t *testing.T) {
	tests := []struct {
		check func(string) error
		in    string
		ok    bool
	}{
		{checkDomain, "example.com", true},
		{checkDomain, "xn--bcher-kva.example", true},
		{checkDomain, "*", false},
		{checkDomain, "*.example.com", false},
		{checkDomain, "@example.com", false},
		{checkDomain, "example.com.", false},
		{checkDomain, ".example.com", false},
		{checkDomain, "exa mple.com", false},
		{checkDomain, "https://example.com", false},
		{checkUser, "alice@example.com", true},
		{checkUser, "alice", false},
		{checkUser, "a@b@c", false},
	}
	for _, tt := range tests {
		if err := tt.check(tt.in); (err == nil) != tt.ok {
			t.Errorf("check(%q) = %v, want ok=%v", tt.in, err, tt.ok)
		}
	}
}
