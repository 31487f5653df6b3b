package oauth

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"
)

// AllDomains is the authorized_domains value that admits every account the
// identity provider vouches for.
const AllDomains = "*"

// maxEmailLen is the longest e-mail address accepted (RFC 5321's path
// limit less the angle brackets).
const maxEmailLen = 254

// Errors of Rule.Admit and ParseEmail. Callers branch on them with
// errors.Is; their text is fit for logs.
var (
	// ErrBadEmail means the address is not of the form local@domain with
	// exactly one "@".
	ErrBadEmail = errors.New("oauth: malformed e-mail address")
	// ErrNotAdmitted means the address is well formed but neither listed in
	// authorized_users nor in a domain listed in authorized_domains.
	ErrNotAdmitted = errors.New("oauth: e-mail address not admitted")
)

// Rule is the contract's authorization rule: which verified e-mail
// addresses may sign in. The zero Rule admits nobody.
//
// An address is admitted when All is set, when it is listed in Users, or
// when its domain is listed in Domains; both lists may be set, and either
// admits. Addresses and domains are compared ignoring ASCII case only, so
// no Unicode folding can make two different domains compare equal. The
// domain of an address is the whole part after its only "@": "example.com"
// does not admit "user@evil-example.com", "user@example.com.evil.org" or
// "user@sub.example.com" (list sub-domains one by one).
type Rule struct {
	// All admits every well-formed address (authorized_domains = *).
	All bool
	// Domains are the admitted e-mail domains, without "@".
	Domains []string
	// Users are the admitted e-mail addresses.
	Users []string
}

// Empty reports whether the rule admits nobody: no list and not All.
func (r Rule) Empty() bool { return !r.All && len(r.Domains) == 0 && len(r.Users) == 0 }

// Admit returns nil when email may sign in, ErrBadEmail when it is not a
// well-formed address, and ErrNotAdmitted otherwise.
func (r Rule) Admit(email string) error {
	_, domain, err := ParseEmail(email)
	if err != nil {
		return err
	}
	if r.All ||
		slices.ContainsFunc(r.Users, func(u string) bool { return asciiEqualFold(u, email) }) ||
		slices.ContainsFunc(r.Domains, func(d string) bool { return asciiEqualFold(d, domain) }) {
		return nil
	}
	return ErrNotAdmitted
}

// ParseEmail splits an address into its local part and domain. It refuses
// addresses without exactly one "@", with an empty part on either side,
// longer than 254 bytes, or holding spaces or control characters.
func ParseEmail(email string) (local, domain string, err error) {
	if email == "" || len(email) > maxEmailLen || strings.Count(email, "@") != 1 ||
		strings.ContainsFunc(email, func(c rune) bool { return unicode.IsSpace(c) || unicode.IsControl(c) }) {
		return "", "", ErrBadEmail
	}
	local, domain, _ = strings.Cut(email, "@")
	if local == "" || domain == "" {
		return "", "", ErrBadEmail
	}
	return local, domain, nil
}

// checkDomain validates one authorized_domains entry.
func checkDomain(d string) error {
	switch {
	case d == AllDomains:
		return errors.New(`"*" admits every account and must be the only entry`)
	case strings.HasPrefix(d, "*."):
		return fmt.Errorf("%q: wildcards are not supported; list each domain", d)
	case strings.Contains(d, "@"):
		return fmt.Errorf("%q: write the domain without \"@\" (e.g. example.com)", d)
	case strings.ContainsFunc(d, func(c rune) bool { return unicode.IsSpace(c) || unicode.IsControl(c) || c == '/' }),
		strings.HasPrefix(d, "."), strings.HasSuffix(d, "."), strings.Contains(d, ".."):
		return fmt.Errorf("%q is not a domain name", d)
	}
	return nil
}

// checkUser validates one authorized_users entry.
func checkUser(u string) error {
	if _, _, err := ParseEmail(u); err != nil {
		return fmt.Errorf("%q is not an e-mail address (local@domain, exactly one \"@\")", u)
	}
	return nil
}

// asciiEqualFold compares a and b ignoring the case of ASCII letters only.
func asciiEqualFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		if lowerASCII(a[i]) != lowerASCII(b[i]) {
			return false
		}
	}
	return true
}

func lowerASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}
