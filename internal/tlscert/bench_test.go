package tlscert

import (
	"crypto/tls"
	"log/slog"
	"net"
	"testing"

	"github.com/backupweb/backupweb/internal/testkit/certtest"
)

// BenchmarkHandshake measures full TLS 1.3 handshakes (no resumption) on
// loopback against the listener's configuration (ServerConfig over
// Files), reported as handshakes per second.
func BenchmarkHandshake(b *testing.B) {
	ca := certtest.NewCA(b)
	certFile, keyFile := ca.Valid(b, "backups.example.lan").Write(b, b.TempDir())
	f, err := Open(certFile, keyFile, slog.New(slog.DiscardHandler))
	if err != nil {
		b.Fatal(err)
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", ServerConfig(tls.VersionTLS13, f.GetCertificate))
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_ = c.(*tls.Conn).Handshake()
			}()
		}
	}()
	client := &tls.Config{RootCAs: ca.Pool(), ServerName: "backups.example.lan", ClientSessionCache: nil}
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			c, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				b.Error(err)
				return
			}
			tc := tls.Client(c, client)
			if err := tc.Handshake(); err != nil {
				b.Error(err)
			}
			tc.Close()
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "handshakes/s")
}
