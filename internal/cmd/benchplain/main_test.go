package main

import (
	"crypto/tls"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/backupweb/backupweb/internal/testkit/certtest"
)

// TestRoutes: the list routes answer the catalog's JSON shape, the health
// route ok, anything else 404 or 405.
func TestRoutes(t *testing.T) {
	srv := httptest.NewServer(handler())
	defer srv.Close()
	tests := []struct {
		method, path string
		status       int
		list         bool
	}{
		{"GET", "/api/backups", 200, true},
		{"GET", "/protected/api/backups", 200, true},
		{"GET", "/healthz", 200, false},
		{"GET", "/other", 404, false},
		{"POST", "/api/backups", 405, false},
	}
	for _, tt := range tests {
		req, _ := http.NewRequest(tt.method, srv.URL+tt.path, nil)
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var body struct {
			Backups []backup `json:"backups"`
		}
		err = json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if resp.StatusCode != tt.status {
			t.Errorf("%s %s: %d, want %d", tt.method, tt.path, resp.StatusCode, tt.status)
		}
		if tt.list && (err != nil || len(body.Backups) != 3 || resp.Header.Get("Content-Type") != "application/json") {
			t.Errorf("%s %s: list %v, %v, %q", tt.method, tt.path, body.Backups, err, resp.Header.Get("Content-Type"))
		}
	}
}

// TestTLS: with a certificate pair the server speaks TLS 1.3 and refuses
// TLS 1.2, the counterpart of tls_min_version = 1.3; a missing pair is an
// error before it listens.
func TestTLS(t *testing.T) {
	ca := certtest.NewCA(t)
	certFile, keyFile := ca.Valid(t, "127.0.0.1").Write(t, t.TempDir())
	cfg, err := tlsConfig(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(handler())
	srv.TLS = cfg
	srv.StartTLS()
	defer srv.Close()
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ca.Pool()}}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Get(srv.URL + "/api/backups")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.TLS.Version != tls.VersionTLS13 {
		t.Errorf("%d over TLS %x, want 200 over TLS 1.3", resp.StatusCode, resp.TLS.Version)
	}
	conn, err := tls.Dial("tcp", srv.Listener.Addr().String(), &tls.Config{RootCAs: ca.Pool(), MaxVersion: tls.VersionTLS12})
	if err == nil {
		conn.Close()
		t.Error("a TLS 1.2 handshake succeeded")
	}
	if _, err := tlsConfig(certFile+".absent", keyFile); err == nil {
		t.Error("a missing certificate file was accepted")
	}
}
