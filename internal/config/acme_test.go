package config

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/backupweb/backupweb/internal/testkit/certtest"
)

// TestLoadACME: the [server] keys of ACME as check-config and serve read
// them: host names only, not with tls_cert, an https directory, a PEM
// root; every error names its key.
func TestLoadACME(t *testing.T) {
	ca := certtest.NewCA(t)
	dir := t.TempDir()
	root := filepath.Join(dir, "root.pem")
	if err := os.WriteFile(root, ca.PEM, 0o600); err != nil {
		t.Fatal(err)
	}
	notPEM := filepath.Join(dir, "key.pem")
	os.WriteFile(notPEM, []byte("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"), 0o600)
	certFile, keyFile := ca.Valid(t, "backups.example.lan").Write(t, dir)
	tests := []struct {
		name, server  string
		errs, warns   []string
		public, first string
	}{
		{"two names", "acme_domains = Backups.example.com, www.example.com  www.example.com\nlisten = :443\n", nil, nil, "https://backups.example.com", "backups.example.com"},
		{"with port", "acme_domains = backups.example.com\nlisten = :8443\nacme_email = ops@example.com\nacme_ca = https://acme.example.lan/dir\nacme_ca_root = " + root + "\n", nil, nil, "https://backups.example.com:8443", "backups.example.com"},
		{"IP", "acme_domains = 192.168.1.2\n", []string{`acme_domains: "192.168.1.2" is an IP address`}, nil, "", ""},
		{"wildcard", "acme_domains = *.example.com\n", []string{`acme_domains: "*.example.com" is a wildcard`}, nil, "", ""},
		{"port", "acme_domains = backups.example.com:443\n", []string{`acme_domains: "backups.example.com:443" is not a bare host name`}, nil, "", ""},
		{"one label", "acme_domains = backups\n", []string{`acme_domains: "backups" has a single label`}, nil, "", ""},
		{"bad label", "acme_domains = -x.example.com\n", []string{`acme_domains: "-x.example.com" has an empty label`}, nil, "", ""},
		{"underscore", "acme_domains = a_b.example.com\n", []string{`acme_domains: "a_b.example.com" holds '_'`}, nil, "", ""},
		{"with files", fmt.Sprintf("acme_domains = backups.example.com\ntls_cert = %s\ntls_key = %s\n", certFile, keyFile), []string{"acme_domains: does not go with tls_cert and tls_key"}, nil, "https://backups.example.com:8080", "backups.example.com"},
		{"http CA", "acme_domains = backups.example.com\nacme_ca = http://acme.example.lan/dir\n", []string{`acme_ca: "http://acme.example.lan/dir" is not an absolute https URL`}, nil, "https://backups.example.com:8080", "backups.example.com"},
		{"relative CA", "acme_domains = backups.example.com\nacme_ca = /dir\n", []string{`acme_ca: "/dir" is not an absolute https URL`}, nil, "https://backups.example.com:8080", "backups.example.com"},
		{"bad email", "acme_domains = backups.example.com\nacme_email = ops\n", []string{`acme_email: "ops" is not an e-mail address`}, nil, "https://backups.example.com:8080", "backups.example.com"},
		{"root missing", "acme_domains = backups.example.com\nacme_ca_root = " + filepath.Join(dir, "none.pem") + "\n", []string{"acme_ca_root: cannot read " + filepath.Join(dir, "none.pem")}, nil, "https://backups.example.com:8080", "backups.example.com"},
		{"root not a certificate", "acme_domains = backups.example.com\nacme_ca_root = " + notPEM + "\n", []string{"acme_ca_root: " + notPEM + " holds a PRIVATE KEY block"}, nil, "https://backups.example.com:8080", "backups.example.com"},
		{"keys without domains", "acme_email = ops@example.com\nacme_ca = https://acme.example.lan/dir\n", nil, []string{"acme_email: is ignored without acme_domains", "acme_ca: is ignored without acme_domains"}, "", ""},
		{"public_url not among them", "acme_domains = backups.example.com\npublic_url = https://nas.example.com\n", nil, []string{"public_url: the host nas.example.com is not among acme_domains"}, "https://nas.example.com", "backups.example.com"},
		{"redirect with ACME", "acme_domains = backups.example.com\nlisten = :443\nredirect_http_listen = :80\n", nil, nil, "https://backups.example.com", "backups.example.com"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := checkServer(t, tt.server, tt.errs, tt.warns, tt.public)
			first := ""
			if d := cfg.Server.TLS.ACME.Domains; len(d) > 0 {
				first = d[0]
			}
			if first != tt.first {
				t.Errorf("first domain %q, want %q", first, tt.first)
			}
		})
	}
}
