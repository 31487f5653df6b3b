package config

import (
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net"
	"net/mail"
	"net/url"
	"os"
	"strings"

	"github.com/backupweb/backupweb/internal/fspath"
	"github.com/backupweb/backupweb/internal/ini"
)

// LetsEncrypt is the directory of Let's Encrypt's production ACME server,
// the default of [server] acme_ca.
const LetsEncrypt = "https://acme-v02.api.letsencrypt.org/directory"

// ACME is what [server] says of certificates obtained by ACME.
type ACME struct {
	// Domains is [server] acme_domains: the host names certificates are
	// obtained for, lower-cased, in the order given. Empty: no ACME.
	Domains []string
	// Email is [server] acme_email, the account's contact; may be empty.
	Email string
	// CA is [server] acme_ca: the directory URL, default LetsEncrypt.
	CA string
	// CARootFile is [server] acme_ca_root: a PEM file of the roots
	// trusted when talking to CA; empty: the system's roots.
	CARootFile string
	// CARoots holds the certificates of CARootFile as Load read them
	// (nil without the key, or when it did not load).
	CARoots *x509.CertPool
}

// On reports whether certificates come from ACME.
func (a ACME) On() bool { return len(a.Domains) > 0 }

// acmeKeys are the keys of ACME besides acme_domains.
var acmeKeys = []string{"acme_email", "acme_ca", "acme_ca_root"}

// loadACME reads the [server] keys of ACME; withFiles is set when
// tls_cert or tls_key is given, which ACME does not go with.
func loadACME(s *ini.Section, withFiles bool) ACME {
	a := ACME{
		Email:      strings.TrimSpace(s.String("acme_email", "")),
		CA:         strings.TrimSpace(s.String("acme_ca", LetsEncrypt)),
		CARootFile: strings.TrimSpace(s.String("acme_ca_root", "")),
	}
	raw := strings.TrimSpace(s.String("acme_domains", ""))
	if raw == "" {
		for _, k := range acmeKeys {
			if s.Has(k) {
				s.Warnf(k, "is ignored without acme_domains")
			}
		}
		return ACME{}
	}
	if withFiles {
		s.Errorf("acme_domains", "does not go with tls_cert and tls_key: the certificate comes either from files or from ACME; remove one or the other")
	}
	seen, bad := map[string]bool{}, false
	for _, d := range strings.FieldsFunc(raw, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' }) {
		d = strings.ToLower(d)
		if err := CheckACMEDomain(d); err != nil {
			s.Errorf("acme_domains", "%q %v", d, err)
			bad = true
			continue
		}
		if !seen[d] {
			seen[d] = true
			a.Domains = append(a.Domains, d)
		}
	}
	if len(a.Domains) == 0 && !bad {
		s.Errorf("acme_domains", "names no host name")
	}
	if a.Email != "" {
		if addr, err := mail.ParseAddress(a.Email); err != nil || addr.Address != a.Email || addr.Name != "" {
			s.Errorf("acme_email", "%q is not an e-mail address (user@example.com)", a.Email)
		}
	}
	if u, err := url.Parse(a.CA); err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil || u.Fragment != "" {
		s.Errorf("acme_ca", "%q is not an absolute https URL (the ACME server's directory, such as %s)", a.CA, LetsEncrypt)
	}
	if a.CARootFile != "" {
		pool, err := readRoots(a.CARootFile)
		if err != nil {
			s.Errorf("acme_ca_root", "%v", err)
		} else {
			a.CARoots = pool
		}
	}
	return a
}

// CheckACMEDomain checks one name of acme_domains: a DNS host name of at
// least two labels, each of letters, digits and hyphens (not first or
// last), 63 bytes at most, 253 in all. An IP address, a wildcard (which
// needs the DNS-01 challenge, not offered), a port or a trailing dot is
// refused; the error says which.
func CheckACMEDomain(d string) error {
	switch {
	case d == "":
		return fmt.Errorf("is empty")
	case net.ParseIP(strings.Trim(d, "[]")) != nil:
		return fmt.Errorf("is an IP address; ACME certificates here are for host names only")
	case strings.Contains(d, "*"):
		return fmt.Errorf("is a wildcard; wildcard certificates need the DNS-01 challenge, which is not offered: list each host name")
	case strings.Contains(d, ":") || strings.Contains(d, "/"):
		return fmt.Errorf("is not a bare host name (no port, scheme or path)")
	case strings.HasSuffix(d, "."):
		return fmt.Errorf("ends with a dot; write the name without it")
	case len(d) > 253:
		return fmt.Errorf("is longer than 253 bytes")
	case !strings.Contains(d, "."):
		return fmt.Errorf("has a single label; ACME certificates need a full host name (backups.example.com)")
	}
	for _, l := range strings.Split(d, ".") {
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return fmt.Errorf("has an empty label, one longer than 63 bytes, or one that starts or ends with a hyphen")
		}
		for i := 0; i < len(l); i++ {
			c := l[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
				return fmt.Errorf("holds %q; a host name has letters, digits, hyphens and dots (write an international name in its xn-- form)", c)
			}
		}
	}
	return nil
}

// readRoots reads a PEM file of CA certificates: at least one, and
// nothing but certificates.
func readRoots(path string) (*x509.CertPool, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %v", fspath.Show(path), fspath.Cause(err))
	}
	pool := x509.NewCertPool()
	n := 0
	for rest := b; ; {
		var blk *pem.Block
		blk, rest = pem.Decode(rest)
		if blk == nil {
			break
		}
		if blk.Type != "CERTIFICATE" {
			return nil, fmt.Errorf("%s holds a %s block; it must hold only the CA's certificates (PEM)", fspath.Show(path), blk.Type)
		}
		c, err := x509.ParseCertificate(blk.Bytes)
		if err != nil {
			return nil, fmt.Errorf("%s: certificate %d: %v", fspath.Show(path), n+1, err)
		}
		pool.AddCert(c)
		n++
	}
	if n == 0 {
		return nil, fmt.Errorf("%s holds no PEM certificate", fspath.Show(path))
	}
	return pool, nil
}
