package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/testkit"
	"github.com/backupweb/backupweb/internal/testkit/certtest"
	"github.com/backupweb/backupweb/internal/testkit/porttest"
)

// httpsClient returns a client that trusts only ca, reaching every
// host name at addr (as a LAN's DNS would), with a cookie jar and HTTP/2.
func httpsClient(ca *certtest.CA, addr string) *http.Client {
	c := testkit.Client()
	d := &net.Dialer{}
	c.Transport = &http.Transport{
		TLSClientConfig:   &tls.Config{RootCAs: ca.Pool()},
		ForceAttemptHTTP2: true,
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return d.DialContext(ctx, network, addr)
		},
	}
	return c
}

// TestServeHTTPS: with tls_cert and tls_key, listen serves HTTPS with
// HTTP/2 and at least tls_min_version; every answer carries HSTS; the
// session cookies are Secure with the __Host- prefix; redirect_http_listen
// answers every plain request with 308 to https at public_url, which
// defaults to the certificate's host; a renewed pair is served after a
// change of the files and after SIGHUP, a bad one is not.
func TestServeHTTPS(t *testing.T) {
	ca := certtest.NewCA(t)
	dir := t.TempDir()
	certDir := filepath.Join(dir, "live")
	os.Mkdir(certDir, 0o700)
	first := ca.Valid(t, "backups.example.lan", "127.0.0.1")
	certFile, keyFile := first.Write(t, certDir)
	users := addUsers(t, dir, "alice")
	port, err := porttest.Free()
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	conf := fmt.Sprintf("[server]\nlisten = %s\nredirect_http_listen = 127.0.0.1:0\ntls_cert = %s\ntls_key = %s\ntls_min_version = 1.3\nstate_dir = %s\naccess_log = false\n[backups]\ndir = %s\n[authentication]\ntype = flask-login\nuse_bcrypt = true\nusers_file = %s\n",
		addr, certFile, keyFile, filepath.Join(dir, "state"), dir, users)
	os.WriteFile(filepath.Join(dir, "nightly.tar.gz"), []byte("backup"), 0o600)
	_, log := serveInProcess(t, dir, conf, nil)
	if !strings.Contains(log.String(), "scheme=https") {
		t.Errorf("the listening line does not say https:\n%s", log)
	}
	base := fmt.Sprintf("https://backups.example.lan:%d", port)
	c := httpsClient(ca, addr)

	resp, err := c.Get(base + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.ProtoMajor != 2 || resp.TLS.Version != tls.VersionTLS13 {
		t.Errorf("protocol %s, TLS %x; want HTTP/2 over TLS 1.3", resp.Proto, resp.TLS.Version)
	}
	if got := resp.Header.Get("Strict-Transport-Security"); got != "max-age=31536000" {
		t.Errorf("Strict-Transport-Security %q", got)
	}

	// TLS 1.2 is refused with tls_min_version = 1.3.
	conn, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: ca.Pool(), ServerName: "backups.example.lan", MaxVersion: tls.VersionTLS12})
	if err == nil {
		conn.Close()
		t.Error("a TLS 1.2 handshake succeeded with tls_min_version = 1.3")
	}

	// Sign in: the cookies are Secure and __Host-.
	login := testkit.SignIn(t, c, testkit.Login{Page: base + "/login", User: "alice", Password: "pw-alice"})
	var session string
	for _, ck := range login.Cookies() {
		if ck.MaxAge < 0 {
			continue
		}
		if !ck.Secure || !strings.HasPrefix(ck.Name, "__Host-") || ck.Domain != "" || ck.Path != "/" {
			t.Errorf("cookie %s: Secure %v, Domain %q, Path %q", ck.Name, ck.Secure, ck.Domain, ck.Path)
		}
		if ck.Name == "__Host-backupweb_session" {
			session = ck.Value
		}
	}
	if session == "" {
		t.Fatalf("no __Host-backupweb_session cookie: %v", login.Header["Set-Cookie"])
	}
	resp, err = c.Get(base + "/api/me")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"alice"`) {
		t.Errorf("/api/me over https: %d %s", resp.StatusCode, body)
	}

	// The plain listener: 308 to https at public_url, whatever the method.
	m := regexp.MustCompile(`redirecting plain HTTP to https" addr=(\S+)`).FindStringSubmatch(log.String())
	if m == nil {
		t.Fatalf("no redirect listener in the log:\n%s", log)
	}
	plain := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, tt := range []struct{ method, target string }{
		{"GET", "/"}, {"GET", "/backups/nightly.tar.gz?x=1"}, {"POST", "/login"}, {"HEAD", "/healthz"}, {"GET", "/.well-known/acme-challenge/x"},
	} {
		req, _ := http.NewRequest(tt.method, "http://"+m[1]+tt.target, strings.NewReader(""))
		req.Host = "other.example"
		resp, err := plain.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if want := base + tt.target; resp.StatusCode != http.StatusPermanentRedirect || resp.Header.Get("Location") != want {
			t.Errorf("%s %s on the plain listener: %d %q, want 308 %q", tt.method, tt.target, resp.StatusCode, resp.Header.Get("Location"), want)
		}
		if resp.Header.Get("Set-Cookie") != "" {
			t.Errorf("%s %s on the plain listener set a cookie", tt.method, tt.target)
		}
	}

	served := func() []byte {
		conn, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: ca.Pool(), ServerName: "backups.example.lan"})
		if err != nil {
			return nil
		}
		defer conn.Close()
		return conn.ConnectionState().PeerCertificates[0].Raw
	}
	// A renewal that replaces the files (certbot): served without a restart.
	second := ca.Valid(t, "backups.example.lan", "127.0.0.1")
	second.Write(t, certDir)
	testkit.WaitUntil(t, 20*time.Second, func() bool { return bytes.Equal(served(), second.Cert.Raw) },
		func() string { return "the renewed certificate is not served:\n" + log.String() })
	// The open session stays.
	resp, err = c.Get(base + "/api/me")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("after the renewal: %v %v", err, resp)
	}
	resp.Body.Close()

	// A bad pair (another pair's key): the old one stays, one error line.
	third := ca.Valid(t, "backups.example.lan")
	certtest.WriteFile(t, keyFile, third.KeyPEM)
	testkit.WaitUntil(t, 20*time.Second, func() bool { return strings.Contains(log.String(), "TLS certificate not reloaded") },
		func() string { return "no error line for a bad pair:\n" + log.String() })
	if !bytes.Equal(served(), second.Cert.Raw) {
		t.Error("a bad pair replaced the one in force")
	}

	// SIGHUP with the whole third pair: served at once.
	certtest.WriteFile(t, certFile, third.CertPEM)
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	testkit.WaitUntil(t, 20*time.Second, func() bool { return bytes.Equal(served(), third.Cert.Raw) },
		func() string { return "SIGHUP did not load the new pair:\n" + log.String() })
	if n := strings.Count(log.String(), "TLS certificate not reloaded"); n != 1 {
		t.Errorf("%d error lines for one bad pair, want 1:\n%s", n, log)
	}
}

// TestServeHTTPSWithoutHSTS: hsts = false sends no Strict-Transport-Security,
// on any answer: a page, a sign-in, a refusal, a missing path.
func TestServeHTTPSWithoutHSTS(t *testing.T) {
	ca := certtest.NewCA(t)
	dir := t.TempDir()
	certFile, keyFile := ca.Valid(t, "127.0.0.1").Write(t, dir)
	users := addUsers(t, dir, "alice")
	addr, _ := serveInProcess(t, dir, fmt.Sprintf("[server]\nlisten = 127.0.0.1:0\nhsts = false\ntls_cert = %s\ntls_key = %s\nstate_dir = %s\n[backups]\ndir = %s\n[authentication]\ntype = flask-login\nuse_bcrypt = true\nusers_file = %s\n",
		certFile, keyFile, filepath.Join(dir, "state"), dir, users), nil)
	c := httpsClient(ca, addr)
	rec := &recorder{next: c.Transport}
	c.Transport = rec
	base := "https://" + addr
	for _, path := range []string{"/healthz", "/api/me", "/no-such-page"} {
		resp, err := c.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.TLS.Version < tls.VersionTLS12 {
			t.Errorf("%s over TLS %x", path, resp.TLS.Version)
		}
	}
	testkit.SignIn(t, c, testkit.Login{Page: base + "/login", User: "alice", Password: "pw-alice"})
	all, _ := rec.since(0)
	for _, a := range all {
		if a.hsts != "" {
			t.Errorf("%s (%d): Strict-Transport-Security %q with hsts = false", a.what, a.status, a.hsts)
		}
	}
	if len(all) < 5 {
		t.Errorf("%d answers seen, want at least 5", len(all))
	}
}

// TestCheckConfigTLS: check-config names the hosts a good pair covers and
// refuses a pair whose key is another's, or that has expired.
func TestCheckConfigTLS(t *testing.T) {
	ca := certtest.NewCA(t)
	dir := t.TempDir()
	good := ca.Valid(t, "backups.example.lan", "192.168.1.20")
	other := ca.Valid(t, "backups.example.lan")
	expired := ca.Issue(t, time.Now().Add(-72*time.Hour), time.Now().Add(-24*time.Hour), "backups.example.lan")
	write := func(name string, cert, key []byte) (string, string) {
		c, k := filepath.Join(dir, name+".crt"), filepath.Join(dir, name+".key")
		certtest.WriteFile(t, c, cert)
		certtest.WriteFile(t, k, key)
		return c, k
	}
	gc, gk := write("good", good.CertPEM, good.KeyPEM)
	mc, mk := write("mismatch", good.CertPEM, other.KeyPEM)
	ec, ek := write("expired", expired.CertPEM, expired.KeyPEM)
	tests := []struct {
		name        string
		cert, key   string
		code        int
		out, errOut string
	}{
		{"good", gc, gk, exitOK, "https: " + gc + " covers backups.example.lan, 192.168.1.20; valid until " + good.Cert.NotAfter.UTC().Format(time.RFC3339), ""},
		{"mismatch", mc, mk, exitError, "", "error: " + filepath.Join(dir, "backupweb.ini")},
		{"expired", ec, ek, exitError, "", "the certificate expired on"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, "backupweb.ini")
			os.WriteFile(path, []byte(fmt.Sprintf("[server]\ntls_cert = %s\ntls_key = %s\n[backups]\ndir = %s\n", tt.cert, tt.key, dir)), 0o600)
			c, out, errOut := testCLI(t.Context(), "", nil)
			code := c.main([]string{"check-config", "-config", path})
			if code != tt.code || !strings.Contains(out.String(), tt.out) || !strings.Contains(errOut.String(), tt.errOut) {
				t.Errorf("exit %d (want %d)\nstdout %s\nstderr %s\nwant %q / %q", code, tt.code, out, errOut, tt.out, tt.errOut)
			}
			if strings.Contains(errOut.String(), "PRIVATE KEY") {
				t.Error("check-config quotes the key")
			}
		})
	}
}
