package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/acmecert"
	"github.com/backupweb/backupweb/internal/redisstore"
	"github.com/backupweb/backupweb/internal/secretkey"
	"github.com/backupweb/backupweb/internal/testkit"
	"github.com/backupweb/backupweb/internal/testkit/pebbletest"
	"github.com/backupweb/backupweb/internal/testkit/porttest"
	"github.com/backupweb/backupweb/internal/testkit/redistest"
)

// acmePort is a loopback port nothing listens on, below the ephemeral
// range (porttest.Free).
func acmePort(t *testing.T) int {
	t.Helper()
	p, err := porttest.Free()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// acmeConf is the configuration of one instance: listen on port,
// redirect_http_listen on plainPort (0: none), more appended to [server].
func acmeConf(dir, name string, port, plainPort int, pb *pebbletest.Server, more string) string {
	redirect := ""
	if plainPort != 0 {
		redirect = fmt.Sprintf("redirect_http_listen = 127.0.0.1:%d\n", plainPort)
	}
	return fmt.Sprintf("[server]\nlisten = 127.0.0.1:%d\n%sacme_domains = %s\nacme_email = ops@example.com\nacme_ca = %s\nacme_ca_root = %s\nstate_dir = %s\naccess_log = false\n%s[backups]\ndir = %s\n[authentication]\ntype = none\n",
		port, redirect, name, pb.Directory, pb.RootFile, filepath.Join(dir, "state"), more, dir)
}

// handshake connects to addr for name, verifying the chain against
// roots, and returns the leaf served.
func handshake(t *testing.T, addr, name string, roots *x509.CertPool) (*x509.Certificate, error) {
	t.Helper()
	d := &net.Dialer{Timeout: 90 * time.Second}
	conn, err := tls.DialWithDialer(d, "tcp", addr, &tls.Config{ServerName: name, RootCAs: roots})
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	return conn.ConnectionState().PeerCertificates[0], nil
}

// acmeClient reaches name at addr over https, trusting roots only.
func acmeClient(addr string, roots *x509.CertPool) *http.Client {
	d := &net.Dialer{}
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		TLSClientConfig:   &tls.Config{RootCAs: roots},
		ForceAttemptHTTP2: true,
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return d.DialContext(ctx, network, addr)
		},
	}}
}

// TestACMEIssueAndServe: with acme_domains and no plain listener, the
// first TLS hello for the name makes backupweb order its certificate from
// a real ACME server (Pebble), which validates it by TLS-ALPN-01 on
// listen; a client verifying against Pebble's root gets it, and HTTPS
// requests are answered (HTTP/2, HSTS). The account key and certificate
// are in state_dir/acme, mode 0700; a name not listed orders nothing.
func TestACMEIssueAndServe(t *testing.T) {
	port := acmePort(t)
	pb := pebbletest.Start(t, pebbletest.Options{TLSPort: port, HTTPPort: acmePort(t)})
	name := pebbletest.Name("issue")
	dir := t.TempDir()
	addr, log := serveInProcess(t, dir, acmeConf(dir, name, port, 0, pb, ""), nil)
	roots := pb.Roots(t)

	leaf, err := handshake(t, addr, name, roots)
	if err != nil {
		t.Fatalf("TLS to %s: %v\nbackupweb:\n%s\npebble:\n%s", name, err, log, pb.Log())
	}
	if len(leaf.DNSNames) != 1 || leaf.DNSNames[0] != name {
		t.Errorf("certificate for %v, want [%s]", leaf.DNSNames, name)
	}
	if v := pb.HTTPValidations(); len(v) != 0 {
		t.Errorf("HTTP-01 was tried without a plain listener: %v", v)
	}

	c := acmeClient(addr, roots)
	resp, err := c.Get("https://" + name + ":" + strconv.Itoa(port) + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.ProtoMajor != 2 || resp.Header.Get("Strict-Transport-Security") != "max-age=31536000" {
		t.Errorf("GET /healthz over https: %d %s HSTS %q: %s", resp.StatusCode, resp.Proto, resp.Header.Get("Strict-Transport-Security"), body)
	}

	// A name not in acme_domains: refused, nothing ordered.
	if _, err := handshake(t, addr, pebbletest.Name("other"), roots); err == nil {
		t.Error("a TLS hello for a name not in acme_domains was answered")
	}
	if n := pb.Orders(); n != 1 {
		t.Errorf("Pebble issued %d certificates, want 1", n)
	}

	acme := filepath.Join(dir, "state", "acme")
	st, err := os.Stat(acme)
	if err != nil || st.Mode().Perm() != 0o700 {
		t.Fatalf("state_dir/acme: %v %v", st, err)
	}
	for _, f := range []string{"acme_account+key", name} {
		if _, err := os.Stat(filepath.Join(acme, f)); err != nil {
			t.Errorf("state_dir/acme/%s: %v", f, err)
		}
	}
}

// TestACMEHTTP01: when the CA cannot reach listen (its TLS-ALPN-01 port
// leads nowhere), the certificate is validated by HTTP-01 on
// redirect_http_listen, which still answers every other plain request
// with 308 to https.
func TestACMEHTTP01(t *testing.T) {
	port, plainPort := acmePort(t), acmePort(t)
	pb := pebbletest.Start(t, pebbletest.Options{TLSPort: acmePort(t), HTTPPort: plainPort})
	name := pebbletest.Name("http01")
	dir := t.TempDir()
	addr, log := serveInProcess(t, dir, acmeConf(dir, name, port, plainPort, pb, ""), nil)
	roots := pb.Roots(t)

	leaf, err := handshake(t, addr, name, roots)
	if err != nil {
		t.Fatalf("TLS to %s: %v\nbackupweb:\n%s\npebble:\n%s", name, err, log, pb.Log())
	}
	if leaf.DNSNames[0] != name {
		t.Errorf("certificate for %v", leaf.DNSNames)
	}
	v := pb.HTTPValidations()
	if len(v) == 0 || !strings.Contains(v[len(v)-1], fmt.Sprintf("%s:%d/.well-known/acme-challenge/", name, plainPort)) {
		t.Errorf("no HTTP-01 validation on redirect_http_listen: %v", v)
	}
	plain := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := plain.Get(fmt.Sprintf("http://127.0.0.1:%d/backups/", plainPort))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if want := fmt.Sprintf("https://%s:%d/backups/", name, port); resp.StatusCode != http.StatusPermanentRedirect || resp.Header.Get("Location") != want {
		t.Errorf("plain GET: %d %q, want 308 %q", resp.StatusCode, resp.Header.Get("Location"), want)
	}
	// A challenge token nobody set is not found, and nothing else is served.
	req, _ := http.NewRequest("GET", fmt.Sprintf("http://127.0.0.1:%d/.well-known/acme-challenge/nothing", plainPort), nil)
	req.Host = name
	resp, err = plain.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("unknown challenge token: %d, want 404", resp.StatusCode)
	}
}

// TestACMERenewEarly: Pebble issues certificates for 30 s and backupweb
// renews 20 s before the end: without a restart or a request that asks
// for it, a second certificate (another serial, a later end) is ordered,
// stored in state_dir/acme and served.
func TestACMERenewEarly(t *testing.T) {
	old := acmeRenewBefore
	acmeRenewBefore = 20 * time.Second
	t.Cleanup(func() { acmeRenewBefore = old })
	port := acmePort(t)
	pb := pebbletest.Start(t, pebbletest.Options{TLSPort: port, HTTPPort: acmePort(t), Validity: 30 * time.Second})
	name := pebbletest.Name("renew")
	dir := t.TempDir()
	addr, log := serveInProcess(t, dir, acmeConf(dir, name, port, 0, pb, ""), nil)
	roots := pb.Roots(t)
	first, err := handshake(t, addr, name, roots)
	if err != nil {
		t.Fatalf("TLS to %s: %v\nbackupweb:\n%s\npebble:\n%s", name, err, log, pb.Log())
	}
	if life := first.NotAfter.Sub(first.NotBefore); life > time.Minute {
		t.Fatalf("Pebble issued a certificate for %s, want 30 s", life)
	}
	var second *x509.Certificate
	testkit.WaitUntil(t, 2*time.Minute, func() bool {
		c, err := handshake(t, addr, name, roots)
		if err == nil && c.SerialNumber.Cmp(first.SerialNumber) != 0 {
			second = c
			return true
		}
		time.Sleep(500 * time.Millisecond)
		return false
	}, func() string { return "the certificate was not renewed:\n" + log.String() + "\npebble:\n" + pb.Log() })
	if !second.NotAfter.After(first.NotAfter) {
		t.Errorf("the renewed certificate ends %s, not after the first's %s", second.NotAfter, first.NotAfter)
	}
	if n := pb.Orders(); n < 2 {
		t.Errorf("Pebble issued %d certificates", n)
	}
	stored, err := os.ReadFile(filepath.Join(dir, "state", "acme", name))
	if err != nil {
		t.Fatal(err)
	}
	var leaf *x509.Certificate
	for rest := stored; leaf == nil; {
		var b *pem.Block
		if b, rest = pem.Decode(rest); b == nil {
			t.Fatalf("state_dir/acme/%s holds no certificate", name)
		}
		if b.Type == "CERTIFICATE" {
			if leaf, err = x509.ParseCertificate(b.Bytes); err != nil {
				t.Fatal(err)
			}
		}
	}
	if leaf.SerialNumber.Cmp(first.SerialNumber) == 0 {
		t.Errorf("state_dir/acme/%s still holds the first certificate", name)
	}
}

// TestACMETwoInstancesShareOneCertificate: two instances with store =
// redis, the same names and one Redis; both are asked for the name at
// once. One certificate is ordered (Pebble issues one), both serve it
// (the same serial), Pebble's validation reaches instance A whichever
// instance ordered, and Redis holds no private key in the clear.
func TestACMETwoInstancesShareOneCertificate(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{Password: redisPassword})
	portA, portB := acmePort(t), acmePort(t)
	pb := pebbletest.Start(t, pebbletest.Options{TLSPort: portA, HTTPPort: acmePort(t)})
	name := pebbletest.Name("shared")
	env := map[string]string{"BACKUP_SECRET_KEY": strings.Repeat("ab", 32), "REDIS_PASSWORD": redisPassword}
	redis := fmt.Sprintf("store = redis\n[redis]\nurl = %s\npassword = ${REDIS_PASSWORD}\nprefix = acmetest:\n", srv.URL())
	start := func(port int) (string, interface{ String() string }) {
		dir := t.TempDir()
		addr, log := serveInProcess(t, dir, acmeConf(dir, name, port, 0, pb, redis), env)
		return addr, log
	}
	addrA, logA := start(portA)
	addrB, logB := start(portB)
	roots := pb.Roots(t)

	var wg sync.WaitGroup
	leaves := make([]*x509.Certificate, 2)
	errs := make([]error, 2)
	for i, addr := range []string{addrA, addrB} {
		wg.Go(func() { leaves[i], errs[i] = handshake(t, addr, name, roots) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("TLS to instance %d: %v\nA:\n%s\nB:\n%s\npebble:\n%s", i, err, logA, logB, pb.Log())
		}
	}
	if leaves[0].SerialNumber.Cmp(leaves[1].SerialNumber) != 0 {
		t.Errorf("the instances serve two certificates: serials %x and %x", leaves[0].SerialNumber, leaves[1].SerialNumber)
	}
	if n := pb.Orders(); n != 1 {
		t.Errorf("Pebble issued %d certificates, want 1 for two instances", n)
	}

	cfg := srv.Config()
	c, err := redisstore.Open(redisstore.Options{URL: cfg.URL, Password: cfg.Password, Prefix: "acmetest:", ConnectTimeout: time.Second, CommandTimeout: time.Second}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, key := range []string{name, "acme_account+key"} {
		raw, err := c.ACMEGet(context.Background(), key)
		if err != nil || raw == nil {
			t.Fatalf("Redis record %s: %v (nil: %v)", key, err, raw == nil)
		}
		if strings.Contains(string(raw), "PRIVATE KEY") || strings.Contains(string(raw), "CERTIFICATE") {
			t.Errorf("the Redis record %s is not sealed", key)
		}
	}
}

// TestRotateSecretResealsACMERecords: with store = redis and
// acme_domains, rotate-secret puts the certificates and account key
// sealed under the previous key under the current one, and a second run
// finds them current.
func TestRotateSecretResealsACMERecords(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{Password: redisPassword})
	dir := t.TempDir()
	config := filepath.Join(dir, "backupweb.ini")
	ini := fmt.Sprintf("[server]\nlisten = 127.0.0.1:0\nstore = redis\nacme_domains = backups.example.com\n[redis]\nurl = %s\npassword = ${REDIS_PASSWORD}\nprefix = rot:\n[backups]\ndir = %s\n[authentication]\ntype = none\n", srv.URL(), dir)
	if err := os.WriteFile(config, []byte(ini), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := srv.Config()
	rc, err := redisstore.Open(redisstore.Options{URL: cfg.URL, Password: cfg.Password, Prefix: "rot:", ConnectTimeout: time.Second, CommandTimeout: time.Second}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	oldKeys, _ := secretkey.New([]byte(rotOldKey), nil)
	old, err := acmecert.NewSharedCache(rc, oldKeys, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, name := range []string{"backups.example.com", "acme_account+key"} {
		if err := old.Put(ctx, name, []byte("record of "+name)); err != nil {
			t.Fatal(err)
		}
	}
	env := map[string]string{"BACKUP_SECRET_KEY": rotNewKey, "BACKUP_SECRET_KEY_PREVIOUS": rotOldKey, "REDIS_PASSWORD": redisPassword}
	for _, want := range []string{"2 resealed, 0 already", "0 resealed, 2 already"} {
		c, out, errs := testCLI(ctx, "", env)
		if code := c.main([]string{"rotate-secret", "-config", config}); code != exitOK {
			t.Fatalf("rotate-secret: %d\n%s%s", code, out, errs)
		}
		if line := "ACME certificates and account key (redis): " + want; !strings.Contains(out.String(), line) {
			t.Errorf("rotate-secret printed:\n%s\nwant a line %q", out, line)
		}
	}
	newKeys, _ := secretkey.New([]byte(rotNewKey), nil)
	cur, _ := acmecert.NewSharedCache(rc, newKeys, 0, nil)
	if d, err := cur.Get(ctx, "acme_account+key"); err != nil || string(d) != "record of acme_account+key" {
		t.Errorf("under the new key alone: %q %v", d, err)
	}
}

// TestACMETwoInstancesRenewOnce: two instances with store = redis and
// certificates of 30 s renewed 20 s before their end. When the
// certificate falls due, one instance orders its renewal (under the
// lock) and the other takes the renewed one from Redis: both come to
// serve the same new serial, and Pebble issued two certificates in all,
// not three.
func TestACMETwoInstancesRenewOnce(t *testing.T) {
	old := acmeRenewBefore
	acmeRenewBefore = 20 * time.Second
	t.Cleanup(func() { acmeRenewBefore = old })
	srv := redistest.Start(t, redistest.Options{Password: redisPassword})
	portA, portB := acmePort(t), acmePort(t)
	pb := pebbletest.Start(t, pebbletest.Options{TLSPort: portA, HTTPPort: acmePort(t), Validity: 30 * time.Second})
	name := pebbletest.Name("renewshared")
	env := map[string]string{"BACKUP_SECRET_KEY": strings.Repeat("ab", 32), "REDIS_PASSWORD": redisPassword}
	redis := fmt.Sprintf("store = redis\n[redis]\nurl = %s\npassword = ${REDIS_PASSWORD}\nprefix = renewtest:\n", srv.URL())
	dirA, dirB := t.TempDir(), t.TempDir()
	addrA, logA := serveInProcess(t, dirA, acmeConf(dirA, name, portA, 0, pb, redis), env)
	addrB, logB := serveInProcess(t, dirB, acmeConf(dirB, name, portB, 0, pb, redis), env)
	roots := pb.Roots(t)
	first, err := handshake(t, addrA, name, roots)
	if err != nil {
		t.Fatalf("TLS to A: %v\nA:\n%s\npebble:\n%s", err, logA, pb.Log())
	}
	if c, err := handshake(t, addrB, name, roots); err != nil || c.SerialNumber.Cmp(first.SerialNumber) != 0 {
		t.Fatalf("B does not serve A's certificate: %v", err)
	}
	var serials [2]string
	testkit.WaitUntil(t, 2*time.Minute, func() bool {
		for i, addr := range []string{addrA, addrB} {
			c, err := handshake(t, addr, name, roots)
			if err != nil {
				return false
			}
			serials[i] = c.SerialNumber.String()
		}
		if serials[0] == serials[1] && serials[0] != first.SerialNumber.String() {
			return true
		}
		time.Sleep(200 * time.Millisecond)
		return false
	}, func() string {
		return fmt.Sprintf("the instances serve %v (first %s)\nA:\n%s\nB:\n%s", serials, first.SerialNumber, logA, logB)
	})
	if n := pb.Orders(); n != 2 {
		t.Errorf("Pebble issued %d certificates for one issue and one renewal by two instances, want 2", n)
	}
}

// TestCheckConfigACME: check-config names the ACME names and directory,
// and refuses what serve could not use: no secret key to seal the
// records with store = redis, a state_dir that cannot hold
// state_dir/acme, certificate files beside acme_domains.
func TestCheckConfigACME(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "file"), nil, 0o600)
	base := "[server]\nacme_domains = backups.example.com, www.example.com\n%s[backups]\ndir = " + dir + "\n[authentication]\ntype = none\n"
	tests := []struct {
		name, server string
		env          map[string]string
		code         int
		want         string
	}{
		{"file store", "state_dir = " + filepath.Join(dir, "state") + "\n", nil, exitOK,
			"https: certificates by ACME for backups.example.com, www.example.com from https://acme-v02.api.letsencrypt.org/directory"},
		{"redis without a secret key", "store = redis\n[redis]\nurl = redis://127.0.0.1:1/0\n", map[string]string{}, exitError,
			"[server] acme_domains: with store = redis the certificates are sealed with the secret key: this type keeps sessions and needs the environment variable BACKUP_SECRET_KEY"},
		{"state_dir unusable", "state_dir = " + filepath.Join(dir, "file", "state") + "\n", nil, exitError, "[server] state_dir: the state folder " + filepath.Join(dir, "file", "state") + " cannot be used"},
		{"with certificate files", "tls_cert = /nonexistent/fullchain.pem\ntls_key = /nonexistent/privkey.pem\n", nil, exitError, "[server] acme_domains: does not go with tls_cert and tls_key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "backupweb.ini")
			os.WriteFile(path, []byte(fmt.Sprintf(base, tt.server)), 0o600)
			c, out, stderr := testCLI(context.Background(), "", tt.env)
			code := c.main([]string{"check-config", "-config", path})
			if code != tt.code || !strings.Contains(out.String()+stderr.String(), tt.want) {
				t.Errorf("exit %d (want %d); want %q in:\n%s%s", code, tt.code, tt.want, out, stderr)
			}
		})
	}
}
