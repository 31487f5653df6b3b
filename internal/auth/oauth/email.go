package oauth

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxEmailLen is the longest e-mail address accepted (RFC 5321's path
// limit less the angle brackets).
const maxEmailLen = 254

// Limits of RFC 5321 on the parts of an address.
const (
	maxLocalLen  = 64
	maxDomainLen = 253
	maxLabelLen  = 63
)

// ParseEmail splits an address into its local part and domain, strictly:
// what it accepts is an address whose domain is decided by one reading
// only, so that no two components can disagree on which domain an address
// belongs to.
//
// It refuses an address that is empty or longer than 254 bytes, is not
// valid UTF-8, holds white space, control or formatting characters (zero
// width joiners, direction overrides), has other than exactly one "@"
// ("a@evil.example@corp.example"), or whose local part is quoted or holds
// any of ()<>[]\,;:" ("\"a@b\"@corp.example", comments, routes). The local
// part must be a dot-atom (RFC 5322: no leading, trailing or double dot; at
// most 64 bytes); letters beyond ASCII are allowed there (RFC 6531). The
// domain must be an ASCII host name: labels of letters, digits and inner
// hyphens, 1 to 63 bytes each, at least two labels, no trailing dot, no
// address literal. An internationalised domain is accepted only in its
// ASCII form (xn--...): a Unicode domain, full-width letters or a
// look-alike letter from another script is refused rather than mapped,
// since mapping is where look-alikes slip through. The domain's letter case
// is kept; Rule compares it ignoring ASCII case.
func ParseEmail(email string) (local, domain string, err error) {
	switch {
	case email == "" || len(email) > maxEmailLen || !utf8.ValidString(email):
		return "", "", ErrBadEmail
	case strings.ContainsFunc(email, invisible):
		return "", "", ErrBadEmail
	case strings.Count(email, "@") != 1:
		return "", "", ErrBadEmail
	}
	local, domain, _ = strings.Cut(email, "@")
	if !dotAtom(local) || checkHost(domain) != nil {
		return "", "", ErrBadEmail
	}
	return local, domain, nil
}

// invisible reports whether c is white space, a control character or a
// formatting character (Unicode category Cf: zero-width joiners, direction
// overrides, soft hyphens), none of which belongs in an address.
func invisible(c rune) bool {
	return unicode.IsSpace(c) || unicode.IsControl(c) || unicode.Is(unicode.Cf, c) || c == utf8.RuneError
}

// dotAtom reports whether s is a dot-atom local part of at most 64 bytes:
// atoms of RFC 5322 atext (or non-ASCII letters, digits and marks, RFC
// 6531) joined by single dots.
func dotAtom(s string) bool {
	if s == "" || len(s) > maxLocalLen || strings.HasPrefix(s, ".") || strings.HasSuffix(s, ".") || strings.Contains(s, "..") {
		return false
	}
	for _, c := range s {
		switch {
		case c == '.':
		case c < utf8.RuneSelf:
			if !atext(byte(c)) {
				return false
			}
		case !unicode.IsLetter(c) && !unicode.IsDigit(c) && !unicode.IsMark(c):
			return false
		}
	}
	return true
}

// atext reports whether c is one of RFC 5322's atext characters.
func atext(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		strings.IndexByte("!#$%&'*+-/=?^_`{|}~", c) >= 0
}

// errHostASCII is checkHost's answer to a domain written with letters
// beyond ASCII.
var errHostASCII = errors.New("is not in ASCII: write an internationalised domain in its xn-- form (the form DNS uses)")

// checkHost reports what makes d something other than an ASCII host name
// of at least two labels: letters, digits and inner hyphens, each label 1
// to 63 bytes, at most 253 bytes in all, no leading, trailing or double
// dot.
func checkHost(d string) error {
	if d == "" || len(d) > maxDomainLen {
		return errors.New("is not a domain name (empty or longer than 253 bytes)")
	}
	for i := 0; i < len(d); i++ {
		if d[i] >= utf8.RuneSelf {
			return errHostASCII
		}
	}
	labels := strings.Split(d, ".")
	if len(labels) < 2 {
		return errors.New("is not a domain name: it has a single label (e.g. write example.com)")
	}
	for _, l := range labels {
		if l == "" {
			return errors.New("is not a domain name: empty label (a leading, trailing or double dot)")
		}
		if len(l) > maxLabelLen || l[0] == '-' || l[len(l)-1] == '-' {
			return fmt.Errorf("is not a domain name: label %q", l)
		}
		for i := 0; i < len(l); i++ {
			c := l[i]
			if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-') {
				return fmt.Errorf("is not a domain name: %q is not a letter, digit or hyphen", c)
			}
		}
	}
	return nil
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
	}
	if err := checkHost(d); err != nil {
		return fmt.Errorf("%q %v", d, err)
	}
	return nil
}

// checkUser validates one authorized_users entry.
func checkUser(u string) error {
	if _, _, err := ParseEmail(u); err != nil {
		return fmt.Errorf("%q is not an e-mail address (local@domain, exactly one \"@\", no quotes or spaces, an ASCII domain)", u)
	}
	return nil
}

// asciiEqualFold compares a and b ignoring the case of ASCII letters only,
// so that no Unicode case folding (the Kelvin sign folds to k) can make
// two different names compare equal.
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

// toLowerASCII lowers the ASCII letters of s and leaves every other byte.
func toLowerASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		b[i] = lowerASCII(c)
	}
	return string(b)
}
