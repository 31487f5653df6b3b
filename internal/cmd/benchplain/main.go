// Command benchplain is the plain net/http server that scripts/bench
// pairs with every target: the same small JSON list backupweb's catalog
// answers, with no authentication, no middleware and no logging, so that a
// target's requests per second divided by this server's, measured in the
// same run, says what the authentication layer costs on this machine.
//
//	GET /api/backups            the list (also the upstream of the proxy targets)
//	GET /protected/api/backups  the same list, the path the proxy targets guard
//	GET /healthz                200 ok
//
// It listens on -listen (default 127.0.0.1:0), prints "listening ADDR"
// once it does, and stops at SIGINT or SIGTERM. With -tls-cert and
// -tls-key (PEM files) it serves HTTPS, TLS 1.3 only, with net/http's
// defaults otherwise (HTTP/2 offered by ALPN): the plain counterpart of
// backupweb serving the same pair with tls_min_version = 1.3.
package main

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// backup is one entry of the list, in the shape of GET /api/backups.
type backup struct {
	Name     string `json:"name"`
	Size     int64  `json:"size"`
	Modified string `json:"modified"`
}

// listing is what every list route answers: three backups, as the
// benchmark's backups folder holds.
var listing = struct {
	Backups []backup `json:"backups"`
}{Backups: []backup{
	{Name: "backup-2024-03-03.tar.gz", Size: 1000, Modified: "2024-03-03T02:00:00Z"},
	{Name: "backup-2024-03-02.tar.gz", Size: 1000, Modified: "2024-03-02T02:00:00Z"},
	{Name: "backup-2024-03-01.tar.gz", Size: 1000, Modified: "2024-03-01T02:00:00Z"},
}}

// handler returns the server's routes.
func handler() http.Handler {
	list := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(listing)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/backups", list)
	mux.HandleFunc("GET /protected/api/backups", list)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("ok")) })
	return mux
}

// tlsConfig loads the pair for -tls-cert and -tls-key, before the server
// says it listens: TLS 1.3 only, the rest net/http's defaults.
func tlsConfig(certFile, keyFile string) (*tls.Config, error) {
	pair, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, err
	}
	return &tls.Config{MinVersion: tls.VersionTLS13, Certificates: []tls.Certificate{pair}}, nil
}

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "address to listen on")
	certFile := flag.String("tls-cert", "", "PEM certificate (chain allowed): serve HTTPS, TLS 1.3 only")
	keyFile := flag.String("tls-key", "", "PEM key of -tls-cert")
	flag.Parse()
	if (*certFile == "") != (*keyFile == "") {
		fmt.Fprintln(os.Stderr, "benchplain: -tls-cert and -tls-key go together")
		os.Exit(2)
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchplain:", err)
		os.Exit(1)
	}
	srv := &http.Server{Handler: handler(), ReadHeaderTimeout: 10 * time.Second}
	if *certFile != "" {
		if srv.TLSConfig, err = tlsConfig(*certFile, *keyFile); err != nil {
			fmt.Fprintln(os.Stderr, "benchplain:", err)
			os.Exit(1)
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	fmt.Println("listening", ln.Addr())
	if srv.TLSConfig != nil {
		err = srv.ServeTLS(ln, "", "")
	} else {
		err = srv.Serve(ln)
	}
	if err != nil && err != http.ErrServerClosed {
		fmt.Fprintln(os.Stderr, "benchplain:", err)
		os.Exit(1)
	}
}
