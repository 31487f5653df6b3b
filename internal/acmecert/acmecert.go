// Package acmecert obtains and renews the certificates listen serves by
// ACME ([server] acme_domains), through golang.org/x/crypto/acme/autocert:
// the TLS-ALPN-01 challenge is answered on the https listener itself, the
// HTTP-01 challenge on redirect_http_listen, and only the configured names
// are ever ordered. Certificates and the account key are kept in a Cache:
// DirCache (a folder under state_dir, mode 0700) for one instance, or
// SharedCache (sealed records in Redis, with a lock so that one instance
// orders and the others read what it stored) for several.
//
// It does not offer DNS-01, and so no wildcard names.
package acmecert

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/acme"
	"golang.org/x/crypto/acme/autocert"

	"github.com/backupweb/backupweb/internal/fspath"
	"github.com/backupweb/backupweb/internal/tlscert"
)

// DefaultRenewBefore is how long before its end a certificate is ordered
// again: 30 days, a third of a Let's Encrypt certificate's 90 (autocert
// caps the value at 30 days).
const DefaultRenewBefore = 30 * 24 * time.Hour

// Options say what to obtain, from where, and where to keep it.
type Options struct {
	// Domains are the host names to obtain certificates for; a TLS hello
	// for any other name is refused, nothing is ordered for it.
	Domains []string
	// Email is the account's contact; may be empty.
	Email string
	// CA is the ACME directory URL.
	CA string
	// Roots are the roots trusted when talking to CA; nil: the system's.
	Roots *x509.CertPool
	// Cache keeps the certificates and the account key (DirCache or
	// SharedCache).
	Cache autocert.Cache
	// RenewBefore is how long before its end a certificate is ordered
	// again; zero: DefaultRenewBefore.
	RenewBefore time.Duration
	// Log receives failures to obtain a certificate; nil: slog.Default.
	Log *slog.Logger
}

// Manager obtains, keeps and renews the certificates. Use ServerConfig
// for listen and HTTPHandler for redirect_http_listen.
type Manager struct {
	m   *autocert.Manager
	log *slog.Logger

	mu     sync.Mutex
	logged map[string]time.Time // name -> when its last failure was logged
}

// logEvery is how often a failure to obtain the certificate of one name
// is logged at most: every handshake meets it until autocert tries again.
const logEvery = 30 * time.Second

// shouldLog reports whether a failure for name is logged now.
func (m *Manager) shouldLog(name string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := time.Now()
	if last, ok := m.logged[name]; ok && now.Sub(last) < logEvery {
		return false
	}
	m.logged[name] = now
	return true
}

// New returns the manager of o. Nothing is ordered before the first TLS
// hello that names one of o.Domains.
func New(o Options) *Manager {
	if o.Log == nil {
		o.Log = slog.Default()
	}
	if o.RenewBefore <= 0 {
		o.RenewBefore = DefaultRenewBefore
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = &tls.Config{RootCAs: o.Roots, MinVersion: tls.VersionTLS12}
	return &Manager{log: o.Log, logged: map[string]time.Time{}, m: &autocert.Manager{
		Prompt:      autocert.AcceptTOS,
		Cache:       o.Cache,
		HostPolicy:  hostPolicy(o.Domains),
		RenewBefore: o.RenewBefore,
		Email:       o.Email,
		Client: &acme.Client{
			DirectoryURL: o.CA,
			HTTPClient:   &http.Client{Transport: tr},
			UserAgent:    "backupweb",
		},
	}}
}

// GetCertificate returns the certificate for hello's server name: the one
// in memory, else the cached one, else a new one ordered now (the
// handshake waits for it). It answers the CA's TLS-ALPN-01 validations. A
// failure to obtain a certificate for a configured name is logged; a name
// not configured is refused without a line (scanners ask for anything).
func (m *Manager) GetCertificate(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
	c, err := m.m.GetCertificate(hello)
	if err != nil {
		if policyErr := m.m.HostPolicy(context.Background(), hello.ServerName); policyErr != nil {
			m.log.Debug("acme: TLS hello for a name not in acme_domains", "server_name", hello.ServerName)
			return nil, err
		}
		if m.shouldLog(hello.ServerName) {
			m.log.Error("acme: cannot obtain a certificate", "server_name", hello.ServerName, "err", err)
		}
		return nil, fmt.Errorf("acme: certificate for %q: %w", hello.ServerName, err)
	}
	return c, nil
}

// ServerConfig is the tls.Config of listen: HTTP/2, HTTP/1.1 and the
// TLS-ALPN-01 protocol, at least min.
func (m *Manager) ServerConfig(min uint16) *tls.Config {
	return tlscert.ServerConfig(min, m.GetCertificate, acme.ALPNProto)
}

// HTTPHandler answers the CA's HTTP-01 validations under
// /.well-known/acme-challenge/ and hands every other request to fallback
// (the 308 to https).
func (m *Manager) HTTPHandler(fallback http.Handler) http.Handler {
	return m.m.HTTPHandler(fallback)
}

// hostPolicy admits exactly the names of domains, compared without case
// and without a port (the Host header of an HTTP-01 validation carries
// one when the plain listener is not on port 80).
func hostPolicy(domains []string) autocert.HostPolicy {
	allowed := map[string]bool{}
	for _, d := range domains {
		allowed[strings.ToLower(d)] = true
	}
	return func(_ context.Context, host string) error {
		if h, _, err := net.SplitHostPort(host); err == nil {
			host = h
		}
		if !allowed[strings.ToLower(host)] {
			return fmt.Errorf("acme: host %q is not in acme_domains", host)
		}
		return nil
	}
}

// DirCache returns the cache in dir, made (mode 0700) when missing and
// put back to 0700 when wider: certificates and the account key are
// private keys.
func DirCache(dir string) (autocert.Cache, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("acme: cannot make the certificate folder %s: %v", fspath.Show(dir), fspath.Cause(err))
	}
	info, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("acme: certificate folder %s: %v", fspath.Show(dir), fspath.Cause(err))
	}
	if !info.IsDir() {
		return nil, errors.New("acme: " + fspath.Show(dir) + " is not a folder")
	}
	if info.Mode().Perm() != 0o700 {
		if err := os.Chmod(dir, 0o700); err != nil {
			return nil, fmt.Errorf("acme: cannot restrict the certificate folder %s to mode 0700: %v", fspath.Show(dir), fspath.Cause(err))
		}
	}
	return autocert.DirCache(dir), nil
}
