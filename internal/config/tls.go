package config

import (
	"crypto/x509"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/backupweb/backupweb/internal/fspath"
	"github.com/backupweb/backupweb/internal/ini"
	"github.com/backupweb/backupweb/internal/tlscert"
)

// TLS is what [server] says of HTTPS served by the program itself.
type TLS struct {
	// CertFile and KeyFile are [server] tls_cert and tls_key: the PEM
	// certificate (a chain allowed) and key listen serves; both or
	// neither. Empty: plain HTTP.
	CertFile, KeyFile string
	// Leaf is the certificate of CertFile as Load read it (nil without
	// one, or when it did not load).
	Leaf *x509.Certificate
	// MinVersion is [server] tls_min_version, default TLS 1.2.
	MinVersion uint16
	// HSTS is [server] hsts, default true: with TLS every answer carries
	// Strict-Transport-Security: max-age=31536000.
	HSTS bool
	// RedirectListen is [server] redirect_http_listen: a plain-HTTP
	// listener that answers every request with 308 to the same path on
	// https. Empty: none.
	RedirectListen string
	// ACME is [server] acme_domains and the keys beside it: certificates
	// obtained and renewed by ACME rather than read from files.
	ACME ACME
}

// On reports whether listen serves HTTPS: with a certificate from files
// or from ACME.
func (t TLS) On() bool { return t.CertFile != "" || t.ACME.On() }

// HSTSValue is the Strict-Transport-Security header's value.
const HSTSValue = "max-age=31536000"

// ExpirySoon is how close to its end a certificate check-config warns
// about.
const ExpirySoon = 14 * 24 * time.Hour

// loadTLS reads the [server] keys of HTTPS and checks the pair at now:
// the key matches, the certificate is in force, and it names a host.
func loadTLS(s *ini.Section, listen string, now time.Time) TLS {
	t := TLS{
		CertFile:       strings.TrimSpace(s.String("tls_cert", "")),
		KeyFile:        strings.TrimSpace(s.String("tls_key", "")),
		HSTS:           s.Bool("hsts", true),
		RedirectListen: strings.TrimSpace(s.String("redirect_http_listen", "")),
	}
	min, err := tlscert.MinVersion(strings.TrimSpace(s.String("tls_min_version", "1.2")))
	if err != nil {
		s.Errorf("tls_min_version", "%v", err)
	}
	t.MinVersion = min
	switch {
	case t.CertFile == "" && t.KeyFile != "":
		s.Errorf("tls_key", "needs tls_cert: name the certificate the key belongs to")
	case t.CertFile != "" && t.KeyFile == "":
		s.Errorf("tls_cert", "needs tls_key: name the certificate's private key")
	case t.CertFile != "":
		pair, err := tlscert.Load(t.CertFile, t.KeyFile, now)
		if err != nil {
			s.Errorf("tls_cert", "%v", err)
			break
		}
		t.Leaf = pair.Leaf
		if len(tlscert.Hosts(t.Leaf)) == 0 {
			s.Errorf("tls_cert", "%s names no host (no DNS name or IP address among its subject alternative names); browsers refuse such a certificate", fspath.Show(t.CertFile))
		} else if left := t.Leaf.NotAfter.Sub(now); left < ExpirySoon {
			s.Warnf("tls_cert", "%s expires on %s, in less than %d days; renew it (the running service reads the new files on change or SIGHUP)", fspath.Show(t.CertFile), t.Leaf.NotAfter.UTC().Format(time.RFC3339), int(ExpirySoon.Hours()/24))
		}
	}
	t.ACME = loadACME(s, t.CertFile != "" || t.KeyFile != "")
	for _, k := range []string{"tls_min_version", "hsts"} {
		if s.Has(k) && !t.On() {
			s.Warnf(k, "is ignored without tls_cert and tls_key (or acme_domains): listen serves plain HTTP")
		}
	}
	if t.RedirectListen != "" {
		switch err := CheckListen(t.RedirectListen); {
		case !t.On():
			s.Errorf("redirect_http_listen", "needs tls_cert and tls_key, or acme_domains: it sends plain-HTTP requests to the https listener")
		case err != nil:
			s.Errorf("redirect_http_listen", "%v", err)
		case t.RedirectListen == listen && !strings.HasSuffix(listen, ":0"):
			s.Errorf("redirect_http_listen", "must differ from listen: it is a second, plain-HTTP listener")
		}
	}
	return t
}

// httpsOrigin is the public_url a TLS listener has when the key is unset:
// https on the certificate's first host name (its first address when it
// names none), with the port of listen unless it is 443.
func httpsOrigin(t TLS, listen string) *url.URL {
	var hosts []string
	switch {
	case t.ACME.On():
		hosts = t.ACME.Domains
	case t.Leaf != nil:
		hosts = tlscert.Hosts(t.Leaf)
	}
	if len(hosts) == 0 {
		return nil
	}
	host := hosts[0]
	for _, h := range hosts {
		if strings.HasPrefix(h, "*.") {
			continue // a wildcard is no host to type
		}
		host = h
		break
	}
	if strings.HasPrefix(host, "*.") {
		return nil
	}
	if _, port, err := net.SplitHostPort(listen); err == nil && port != "443" && port != "0" {
		host = net.JoinHostPort(host, port)
	} else if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	return &url.URL{Scheme: "https", Host: strings.ToLower(host)}
}
