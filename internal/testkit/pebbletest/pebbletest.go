// Package pebbletest runs Let's Encrypt's Pebble, a real ACME server for
// tests, in a temporary folder on free loopback ports: its directory's
// TLS certificate comes from certtest, it validates challenges on the
// ports the program under test listens on, and the names it validates
// resolve to 127.0.0.1 through a small DNS server of the kit's own
// (Pebble's -dnsserver), so no name outside the test is ever looked up.
//
// Pebble is found on PATH, in .ci/bin of the repository (where .ci/run
// installs it), or at $BACKUPWEB_PEBBLE; without it the test is skipped,
// or fails under BACKUPWEB_REQUIRE_TOOLS=1.
package pebbletest

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/testkit"
	"github.com/backupweb/backupweb/internal/testkit/certtest"
	"github.com/backupweb/backupweb/internal/testkit/logtest"
	"github.com/backupweb/backupweb/internal/testkit/toolstest"
)

// Options say where Pebble validates and what it issues.
type Options struct {
	// HTTPPort and TLSPort are where Pebble connects to validate HTTP-01
	// and TLS-ALPN-01 challenges (redirect_http_listen and listen of the
	// program under test), on 127.0.0.1.
	HTTPPort, TLSPort int
	// Validity is the life of the certificates issued; zero: Pebble's
	// 90 days.
	Validity time.Duration
}

// Server is a running Pebble.
type Server struct {
	// Directory is the ACME directory URL (acme_ca).
	Directory string
	// RootFile is the PEM of the CA of Pebble's own https certificate
	// (acme_ca_root).
	RootFile string
	mgmt     string
	ca       *certtest.CA
	out      *logtest.Buffer
}

// Find returns the path of pebble, or skips t (fails it under
// BACKUPWEB_REQUIRE_TOOLS=1) when there is none.
func Find(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("BACKUPWEB_PEBBLE"); p != "" {
		return p
	}
	if p, err := exec.LookPath("pebble"); err == nil {
		return p
	}
	if root, err := repoRoot(); err == nil {
		if p := filepath.Join(root, ".ci", "bin", "pebble"); isExec(p) {
			return p
		}
	}
	msg := "pebble not found (on PATH, in .ci/bin, or at $BACKUPWEB_PEBBLE; install it with `GOBIN=$PWD/.ci/bin go install github.com/letsencrypt/pebble/v2/cmd/pebble@v2.10.3`)"
	if toolstest.RequireTools() {
		t.Fatal(msg + "; BACKUPWEB_REQUIRE_TOOLS=1 requires it")
	}
	t.Skip(msg + "; skipping")
	return ""
}

// Start runs Pebble for the rest of the test.
func Start(t testing.TB, o Options) *Server {
	t.Helper()
	bin := Find(t)
	dir := t.TempDir()
	ca := certtest.NewCA(t)
	listen, mgmt := testkit.FreeAddr(t), testkit.FreeAddr(t)
	certFile, keyFile := ca.Valid(t, "localhost", "127.0.0.1").Write(t, dir)
	rootFile := filepath.Join(dir, "root.pem")
	if err := os.WriteFile(rootFile, ca.PEM, 0o600); err != nil {
		t.Fatal(err)
	}
	profile := map[string]any{"description": "test"}
	if o.Validity > 0 {
		profile["validityPeriod"] = int(o.Validity / time.Second)
	}
	conf := map[string]any{"pebble": map[string]any{
		"listenAddress":           listen,
		"managementListenAddress": mgmt,
		"certificate":             certFile,
		"privateKey":              keyFile,
		"httpPort":                o.HTTPPort,
		"tlsPort":                 o.TLSPort,
		"ocspResponderURL":        "",
		"keyAlgorithm":            "ecdsa",
		"retryAfter":              map[string]int{"authz": 1, "order": 1},
		"profiles":                map[string]any{"default": profile},
	}}
	b, _ := json.Marshal(conf)
	confFile := filepath.Join(dir, "pebble.json")
	if err := os.WriteFile(confFile, b, 0o600); err != nil {
		t.Fatal(err)
	}
	dns := startDNS(t)
	cmd := exec.Command(bin, "-config", confFile, "-dnsserver", dns)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PEBBLE_VA_NOSLEEP=1", "PEBBLE_WFE_NONCEREJECT=0")
	var out logtest.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	testkit.Start(t, cmd)
	testkit.WaitListening(t, listen, 30*time.Second, out.String)
	testkit.WaitListening(t, mgmt, 30*time.Second, out.String)
	return &Server{Directory: "https://" + listen + "/dir", RootFile: rootFile, mgmt: mgmt, ca: ca, out: &out}
}

// Log is what Pebble wrote so far.
func (s *Server) Log() string { return s.out.String() }

// Orders counts the orders Pebble finalized (certificates issued), read
// from its log.
func (s *Server) Orders() int {
	return len(issued.FindAllString(s.out.String(), -1))
}

var issued = regexp.MustCompile(`(?m)Issued certificate serial`)

// HTTPValidations returns the URLs Pebble fetched to validate HTTP-01
// challenges, read from its log (it logs nothing of TLS-ALPN-01).
func (s *Server) HTTPValidations() []string {
	var out []string
	for _, m := range httpValidation.FindAllStringSubmatch(s.out.String(), -1) {
		out = append(out, m[1])
	}
	return out
}

var httpValidation = regexp.MustCompile(`Attempting to validate w/ HTTP: (\S+)`)

// Roots returns Pebble's issuing root (management /roots/0): the pool a
// client verifying the certificates it issues trusts.
func (s *Server) Roots(t testing.TB) *x509.CertPool {
	t.Helper()
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: s.ca.Pool()}}}
	resp, err := c.Get("https://" + s.mgmt + "/roots/0")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("Pebble's root: %d %v %s", resp.StatusCode, err, b)
	}
	pool := x509.NewCertPool()
	for rest := b; ; {
		var blk *pem.Block
		if blk, rest = pem.Decode(rest); blk == nil {
			break
		}
		c, err := x509.ParseCertificate(blk.Bytes)
		if err != nil {
			t.Fatal(err)
		}
		pool.AddCert(c)
	}
	return pool
}

// repoRoot is the folder of go.mod above the working directory.
func repoRoot() (string, error) {
	d, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		p := filepath.Dir(d)
		if p == d {
			return "", fmt.Errorf("no go.mod above the working directory")
		}
		d = p
	}
}

func isExec(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir() && st.Mode()&0o111 != 0
}

// Name returns a host name for the test, under the reserved .test
// domain (RFC 6761) that the kit's DNS server answers with 127.0.0.1.
func Name(label string) string {
	return strings.ToLower(label) + "." + strconv.Itoa(os.Getpid()) + ".backupweb.test"
}
