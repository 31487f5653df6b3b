// Package certtest makes certificates for tests: a certificate authority
// of the test's own and server certificates it signs, written as PEM files
// the way certbot or an internal CA leaves them. Nothing is committed: the
// keys are made when the test runs.
package certtest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// CA is a test certificate authority.
type CA struct {
	Cert *x509.Certificate
	key  *ecdsa.PrivateKey
	// PEM is the CA certificate in PEM.
	PEM []byte
}

// NewCA makes a certificate authority valid from an hour ago for a year.
func NewCA(t testing.TB) *CA {
	t.Helper()
	key := newKey(t)
	tmpl := &x509.Certificate{
		SerialNumber:          serial(t),
		Subject:               pkix.Name{CommonName: "backupweb test CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(365 * 24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return &CA{Cert: cert, key: key, PEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// Write writes the CA certificate as dir/ca.pem (0600), for a server's
// or client's CA file, and returns its path.
func (ca *CA) Write(t testing.TB, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "ca.pem")
	WriteFile(t, path, ca.PEM)
	return path
}

// WriteLocalhost makes a CA and a server certificate it signs for
// localhost and 127.0.0.1, for a server a test runs on loopback (slapd,
// redis-server): dir/ca.pem, dir/server.pem (the certificate, then the
// CA's) and dir/server.key, each 0600. It returns the CA file's path.
func WriteLocalhost(t testing.TB, dir string) (caFile string) {
	t.Helper()
	ca := NewCA(t)
	leaf := ca.Valid(t, "localhost", "127.0.0.1")
	WriteFile(t, filepath.Join(dir, "server.pem"), leaf.CertPEM)
	WriteFile(t, filepath.Join(dir, "server.key"), leaf.KeyPEM)
	return ca.Write(t, dir)
}

// Pool returns a pool holding only the CA.
func (ca *CA) Pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.Cert)
	return p
}

// Leaf is a server certificate and its key, in PEM.
type Leaf struct {
	// CertPEM holds the server certificate followed by the CA's (a chain,
	// as certbot's fullchain.pem).
	CertPEM []byte
	KeyPEM  []byte
	Cert    *x509.Certificate
}

// Issue signs a server certificate for hosts (names or IP addresses),
// valid from notBefore to notAfter.
func (ca *CA) Issue(t testing.TB, notBefore, notAfter time.Time, hosts ...string) Leaf {
	t.Helper()
	key := newKey(t)
	tmpl := &x509.Certificate{
		SerialNumber: serial(t),
		Subject:      pkix.Name{CommonName: "backupweb test server"},
		NotBefore:    notBefore,
		NotAfter:     notAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	chain := append(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), ca.PEM...)
	return Leaf{CertPEM: chain, KeyPEM: pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), Cert: cert}
}

// Valid signs a server certificate for hosts valid from an hour ago for
// 90 days.
func (ca *CA) Valid(t testing.TB, hosts ...string) Leaf {
	return ca.Issue(t, time.Now().Add(-time.Hour), time.Now().Add(90*24*time.Hour), hosts...)
}

// Write writes the pair as dir/fullchain.pem and dir/privkey.pem (0600),
// replacing each file whole, and returns their paths.
func (l Leaf) Write(t testing.TB, dir string) (certFile, keyFile string) {
	t.Helper()
	certFile, keyFile = filepath.Join(dir, "fullchain.pem"), filepath.Join(dir, "privkey.pem")
	WriteFile(t, certFile, l.CertPEM)
	WriteFile(t, keyFile, l.KeyPEM)
	return certFile, keyFile
}

// WriteFile writes data to path through a new file renamed over it, as
// certbot's renewal replaces its links' targets: a reader sees the old
// file or the new one.
func WriteFile(t testing.TB, path string, data []byte) {
	t.Helper()
	tmp := path + ".new"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

func newKey(t testing.TB) *ecdsa.PrivateKey {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

func serial(t testing.TB) *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 64))
	if err != nil {
		t.Fatal(err)
	}
	return n
}
