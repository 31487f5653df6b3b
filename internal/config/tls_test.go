package config

import (
	"crypto/tls"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/testkit/certtest"
)

// TestLoadTLS: the [server] keys of HTTPS, checked as check-config and
// serve check them: the pair matches, is in force and names a host;
// public_url defaults to the https origin of the certificate's host.
func TestLoadTLS(t *testing.T) {
	ca := certtest.NewCA(t)
	dir := t.TempDir()
	write := func(name string, l certtest.Leaf) (string, string) {
		d := filepath.Join(dir, name)
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
		return l.Write(t, d)
	}
	now := time.Now()
	goodCert, goodKey := write("good", ca.Valid(t, "backups.example.lan", "192.168.1.20"))
	_, otherKey := write("other", ca.Valid(t, "other.example.lan"))
	expCert, expKey := write("expired", ca.Issue(t, now.Add(-48*time.Hour), now.Add(-time.Hour), "backups.example.lan"))
	soonCert, soonKey := write("soon", ca.Issue(t, now.Add(-time.Hour), now.Add(3*24*time.Hour), "backups.example.lan"))
	noHostCert, noHostKey := write("nohost", ca.Valid(t))
	tests := []struct {
		name   string
		server string
		errs   []string // substrings of the errors, in order
		warns  []string
		public string // the public_url in force
		min    uint16
	}{
		{"plain", "", nil, nil, "", tls.VersionTLS12},
		{"a good pair", fmt.Sprintf("tls_cert = %s\ntls_key = %s\nlisten = 0.0.0.0:8443\n", goodCert, goodKey), nil, nil, "https://backups.example.lan:8443", tls.VersionTLS12},
		{"on 443, TLS 1.3", fmt.Sprintf("tls_cert = %s\ntls_key = %s\nlisten = :443\ntls_min_version = 1.3\n", goodCert, goodKey), nil, nil, "https://backups.example.lan", tls.VersionTLS13},
		{"public_url kept", fmt.Sprintf("tls_cert = %s\ntls_key = %s\npublic_url = https://192.168.1.20:8443\n", goodCert, goodKey), nil, nil, "https://192.168.1.20:8443", tls.VersionTLS12},
		{"public_url not covered", fmt.Sprintf("tls_cert = %s\ntls_key = %s\npublic_url = https://nas.example.lan\n", goodCert, goodKey), nil, []string{"public_url: the host nas.example.lan is not among those the certificate"}, "https://nas.example.lan", tls.VersionTLS12},
		{"mismatched pair", fmt.Sprintf("tls_cert = %s\ntls_key = %s\n", goodCert, otherKey), []string{"tls_cert: cannot load the pair"}, nil, "", tls.VersionTLS12},
		{"expired", fmt.Sprintf("tls_cert = %s\ntls_key = %s\n", expCert, expKey), []string{"tls_cert: " + expCert + ": the certificate expired on"}, nil, "", tls.VersionTLS12},
		{"expires soon", fmt.Sprintf("tls_cert = %s\ntls_key = %s\n", soonCert, soonKey), nil, []string{"tls_cert: " + soonCert + " expires on"}, "https://backups.example.lan:8080", tls.VersionTLS12},
		{"no host", fmt.Sprintf("tls_cert = %s\ntls_key = %s\n", noHostCert, noHostKey), []string{"tls_cert: " + noHostCert + " names no host"}, nil, "", tls.VersionTLS12},
		{"cert alone", "tls_cert = " + goodCert + "\n", []string{"tls_cert: needs tls_key"}, nil, "", tls.VersionTLS12},
		{"key alone", "tls_key = " + goodKey + "\n", []string{"tls_key: needs tls_cert"}, nil, "", tls.VersionTLS12},
		{"bad version", fmt.Sprintf("tls_cert = %s\ntls_key = %s\ntls_min_version = 1.1\n", goodCert, goodKey), []string{`tls_min_version: "1.1" is not a TLS version`}, nil, "https://backups.example.lan:8080", 0},
		{"TLS keys without TLS", "tls_min_version = 1.3\nhsts = false\n", nil, []string{"tls_min_version: is ignored without tls_cert", "hsts: is ignored without tls_cert"}, "", tls.VersionTLS13},
		{"redirect without TLS", "redirect_http_listen = :80\n", []string{"redirect_http_listen: needs tls_cert"}, nil, "", tls.VersionTLS12},
		{"redirect on listen", fmt.Sprintf("tls_cert = %s\ntls_key = %s\nlisten = :8443\nredirect_http_listen = :8443\n", goodCert, goodKey), []string{"redirect_http_listen: must differ from listen"}, nil, "https://backups.example.lan:8443", tls.VersionTLS12},
		{"redirect bad address", fmt.Sprintf("tls_cert = %s\ntls_key = %s\nredirect_http_listen = nowhere\n", goodCert, goodKey), []string{"redirect_http_listen: must be HOST:PORT"}, nil, "https://backups.example.lan:8080", tls.VersionTLS12},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := checkServer(t, tt.server, tt.errs, tt.warns, tt.public)
			if cfg.Server.TLS.MinVersion != tt.min {
				t.Errorf("min version %x, want %x", cfg.Server.TLS.MinVersion, tt.min)
			}
			if !cfg.Server.TLS.HSTS != strings.Contains(tt.server, "hsts = false") {
				t.Errorf("hsts %v", cfg.Server.TLS.HSTS)
			}
		})
	}
}

func match(t *testing.T, what string, got, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s %q, want %q", what, got, want)
		return
	}
	for i := range want {
		if !strings.Contains(got[i], want[i]) {
			t.Errorf("%s[%d] = %q, want %q", what, i, got[i], want[i])
		}
	}
}

// checkServer loads a file of the [server] lines given, checks its errors
// and warnings (see match) and the public_url it ends with, and returns it.
func checkServer(t *testing.T, server string, errs, warns []string, public string) *Config {
	t.Helper()
	cfg := Load(writeConfig(t, "[server]\n"+server), lookupEnv)
	var gotErrs, gotWarns []string
	for _, p := range cfg.Report.Problems() {
		if p.Severity.String() == "error" {
			gotErrs = append(gotErrs, p.String())
		} else {
			gotWarns = append(gotWarns, p.String())
		}
	}
	match(t, "errors", gotErrs, errs)
	match(t, "warnings", gotWarns, warns)
	got := ""
	if cfg.Server.PublicURL != nil {
		got = cfg.Server.PublicURL.String()
	}
	if got != public {
		t.Errorf("public_url %q, want %q", got, public)
	}
	return cfg
}
