package web

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestNewServer(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	h := http.NotFoundHandler()
	srv := NewServer(h, log)
	if srv.ReadHeaderTimeout != 10*time.Second || srv.ReadTimeout != time.Minute ||
		srv.WriteTimeout != time.Minute || srv.IdleTimeout != 2*time.Minute || srv.MaxHeaderBytes != 64<<10 {
		t.Fatalf("timeouts = %+v", srv)
	}
	if srv.Handler == nil || srv.ErrorLog == nil {
		t.Fatal("handler or error log missing")
	}
	srv.ErrorLog.Printf("http: TLS handshake error from 192.0.2.1:5: EOF")
	if !strings.Contains(buf.String(), "level=WARN") || !strings.Contains(buf.String(), "TLS handshake") {
		t.Fatalf("error log not routed to slog: %q", buf.String())
	}
	if NewServer(h, nil).ErrorLog == nil {
		t.Fatal("nil logger: no error log")
	}
}

func listen(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Skipf("cannot listen on loopback: %v", err)
	}
	return ln
}

func TestServeStopsCleanly(t *testing.T) {
	h, _ := noneHandler(t)
	srv := NewServer(h, nil)
	ln := listen(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, srv, ln) }()

	resp, err := http.Get("http://" + ln.Addr().String() + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "ok" {
		t.Fatalf("healthz = %q", body)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Serve after cancel = %v, want nil", err)
	}
	if _, err := http.Get("http://" + ln.Addr().String() + "/healthz"); err == nil {
		t.Fatal("still serving after shutdown")
	}
}

func TestServeCutsLongRequestsAfterTimeout(t *testing.T) {
	old := shutdownTimeout
	shutdownTimeout = 50 * time.Millisecond
	defer func() { shutdownTimeout = old }()

	started := make(chan struct{})
	release := make(chan struct{})
	defer close(release)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("begun"))
		w.(http.Flusher).Flush()
		close(started)
		<-release
	})
	var buf bytes.Buffer
	srv := NewServer(h, slog.New(slog.NewTextHandler(&buf, nil)))
	ln := listen(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, srv, ln) }()

	resp, err := http.Get("http://" + ln.Addr().String() + "/")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	<-started
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Serve = %v, want nil: being asked to stop is a clean end", err)
	}
	if !strings.Contains(buf.String(), "cut off") {
		t.Errorf("forced close not logged: %q", buf.String())
	}
}

func TestServeReportsFailures(t *testing.T) {
	ln := listen(t)
	ln.Close()
	err := Serve(context.Background(), NewServer(http.NotFoundHandler(), nil), ln)
	if err == nil || !strings.HasPrefix(err.Error(), "web: ") {
		t.Fatalf("Serve on a closed listener = %v", err)
	}

	srv := NewServer(http.NotFoundHandler(), nil)
	ln = listen(t)
	done := make(chan error, 1)
	go func() { done <- Serve(context.Background(), srv, ln) }()
	// Shut down from outside, not through ctx: Serve must say so. A
	// Serve that starts after Shutdown returns ErrServerClosed as well.
	if err := srv.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := <-done; !errors.Is(err, http.ErrServerClosed) {
		t.Fatalf("Serve = %v, want ErrServerClosed", err)
	}
}
