// Package tlscert serves a certificate and key read from PEM files
// ([server] tls_cert and tls_key): it checks a pair as check-config does
// (the key matches, the certificate is in force, the hosts it names), and
// Files keeps the pair in force, reading it again on SIGHUP (Reload) and
// when either file changes (Watch), keeping the pair it serves whenever
// the new one does not load.
package tlscert

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/backupweb/backupweb/internal/filewatch"
	"github.com/backupweb/backupweb/internal/fspath"
)

// Load reads the certificate (a chain allowed: the server's certificate
// first) and the key of a pair from PEM files and checks them at now: the
// key must be the certificate's, and the certificate must be in force
// (after NotBefore, before NotAfter). The result has its Leaf parsed.
// Errors name the files and never quote the key.
func Load(certFile, keyFile string, now time.Time) (*tls.Certificate, error) {
	pair, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("cannot load the pair %s and %s: %v", fspath.Show(certFile), fspath.Show(keyFile), fspath.Cause(err))
	}
	leaf := pair.Leaf
	if leaf == nil {
		if leaf, err = x509.ParseCertificate(pair.Certificate[0]); err != nil {
			return nil, fmt.Errorf("%s: cannot parse the certificate: %v", fspath.Show(certFile), err)
		}
		pair.Leaf = leaf
	}
	switch {
	case now.After(leaf.NotAfter):
		return nil, fmt.Errorf("%s: the certificate expired on %s", fspath.Show(certFile), leaf.NotAfter.UTC().Format(time.RFC3339))
	case now.Before(leaf.NotBefore):
		return nil, fmt.Errorf("%s: the certificate is not valid before %s", fspath.Show(certFile), leaf.NotBefore.UTC().Format(time.RFC3339))
	}
	return &pair, nil
}

// Hosts returns the names and addresses a certificate covers: its DNS
// names, then its IP addresses. A certificate without either covers no
// host a browser accepts (the common name alone is no longer read).
func Hosts(leaf *x509.Certificate) []string {
	out := append([]string(nil), leaf.DNSNames...)
	for _, ip := range leaf.IPAddresses {
		out = append(out, ip.String())
	}
	return out
}

// Covers reports whether the certificate names host (a name or an IP
// address, without port).
func Covers(leaf *x509.Certificate, host string) bool {
	if ip := net.ParseIP(host); ip != nil {
		return leaf.VerifyHostname(ip.String()) == nil
	}
	return leaf.VerifyHostname(host) == nil
}

// MinVersion reads [server] tls_min_version: "1.2" (the default, for "")
// or "1.3".
func MinVersion(s string) (uint16, error) {
	switch s {
	case "", "1.2":
		return tls.VersionTLS12, nil
	case "1.3":
		return tls.VersionTLS13, nil
	}
	return 0, fmt.Errorf("%q is not a TLS version this service offers; write 1.2 or 1.3", s)
}

// ServerConfig returns the TLS configuration of the main listener:
// certificates from get, at least version min, HTTP/2 offered before
// HTTP/1.1, and extra ALPN protocols (the ACME TLS-ALPN-01 challenge's)
// after them.
func ServerConfig(min uint16, get func(*tls.ClientHelloInfo) (*tls.Certificate, error), extra ...string) *tls.Config {
	return &tls.Config{
		MinVersion:     min,
		GetCertificate: get,
		NextProtos:     append([]string{"h2", "http/1.1"}, extra...),
	}
}

// PollInterval is how often Files.Watch looks at the files.
const PollInterval = 2 * time.Second

// Files keeps the pair of CertFile and KeyFile in force. Use it as a
// tls.Config's GetCertificate.
type Files struct {
	certFile, keyFile string
	log               *slog.Logger
	now               func() time.Time

	cur atomic.Pointer[tls.Certificate]

	mu     sync.Mutex // serialises loads; guards stamps and failed
	stamps [2]filewatch.Stamp
	failed bool // the files as stamped did not load (logged once)
}

// Open loads the pair (see Load) and returns what keeps it in force; log
// receives the reloads' lines.
func Open(certFile, keyFile string, log *slog.Logger) (*Files, error) {
	f := &Files{certFile: certFile, keyFile: keyFile, log: log, now: time.Now}
	f.stamps = f.stat()
	pair, err := Load(certFile, keyFile, f.now())
	if err != nil {
		return nil, err
	}
	f.cur.Store(pair)
	return f, nil
}

// GetCertificate returns the pair in force, whatever the client asks.
func (f *Files) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	return f.cur.Load(), nil
}

// Leaf returns the certificate in force.
func (f *Files) Leaf() *x509.Certificate { return f.cur.Load().Leaf }

// Reload reads the pair again (SIGHUP): a pair that loads replaces the
// one in force, and one info line says which certificate is now served;
// one that does not keeps the pair in force, and one error line says why.
func (f *Files) Reload() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.stamps = f.stat()
	return f.load()
}

// load reads the pair, with f.mu held.
func (f *Files) load() error {
	pair, err := Load(f.certFile, f.keyFile, f.now())
	if err != nil {
		f.failed = true
		f.log.Error("TLS certificate not reloaded; the previous one is still served", "cert", fspath.Show(f.certFile), "key", fspath.Show(f.keyFile), "err", err)
		return err
	}
	f.failed = false
	f.cur.Store(pair)
	f.log.Info("TLS certificate loaded", "cert", fspath.Show(f.certFile), "hosts", Hosts(pair.Leaf), "not_after", pair.Leaf.NotAfter.UTC().Format(time.RFC3339))
	return nil
}

// Watch loads the pair again whenever either file changes, every
// PollInterval, until ctx ends (auth.Watcher). A renewal that writes the
// two files one after the other may be seen half done: the mismatched
// pair is refused and logged, and the next change (the second file)
// loads the whole pair. A pair that failed is tried again only when a
// file changes once more, so a broken pair is logged once.
func (f *Files) Watch(ctx context.Context) { filewatch.Every(ctx, PollInterval, f.poll) }

// poll loads the pair when a file's stamp changed, or when a stamp was
// racy (written within filewatch.RacyWindow: a second write in the same
// clock tick would keep the stamp).
func (f *Files) poll() {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := f.stat()
	changed := !now[0].Same(f.stamps[0]) || !now[1].Same(f.stamps[1])
	racy := !f.failed && (f.stamps[0].Racy() || f.stamps[1].Racy())
	if !changed && !racy {
		return
	}
	f.stamps = now
	if !changed && f.cur.Load() != nil {
		// A racy stamp: load only if the files now hold another pair.
		pair, err := Load(f.certFile, f.keyFile, f.now())
		if err != nil || sameChain(pair, f.cur.Load()) {
			return
		}
	}
	_ = f.load() // logged
}

func (f *Files) stat() [2]filewatch.Stamp {
	a, _ := filewatch.Stat(f.certFile)
	b, _ := filewatch.Stat(f.keyFile)
	return [2]filewatch.Stamp{a, b}
}

// sameChain reports whether a and b hold the same certificates.
func sameChain(a, b *tls.Certificate) bool {
	if len(a.Certificate) != len(b.Certificate) {
		return false
	}
	for i := range a.Certificate {
		if string(a.Certificate[i]) != string(b.Certificate[i]) {
			return false
		}
	}
	return true
}
