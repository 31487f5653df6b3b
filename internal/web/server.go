package web

import (
	"context"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"net"
	"net/http"
	"time"
)

// Server timeouts. They protect the service from clients that connect and
// then dawdle, without cutting off honest work.
const (
	// ReadHeaderTimeout bounds reading a request's headers.
	ReadHeaderTimeout = 10 * time.Second
	// ReadTimeout bounds reading a whole request; bodies are small forms.
	ReadTimeout = time.Minute
	// WriteTimeout bounds every response but downloads, counted from the
	// end of the request's headers. Downloads move the deadline forward
	// as they progress (see the download handler), so a large backup on a
	// slow link completes while a stalled one is cut after a minute.
	WriteTimeout = time.Minute
	// IdleTimeout closes kept-alive connections idle that long.
	IdleTimeout = 2 * time.Minute
	// MaxHeaderBytes caps the size of a request's headers.
	MaxHeaderBytes = 64 << 10
	// ShutdownTimeout is how long Serve waits for requests in flight
	// after being asked to stop.
	ShutdownTimeout = 10 * time.Second
)

// NewServer returns an *http.Server for h with the timeouts above and
// net/http's own error messages (TLS handshakes, broken connections,
// superfluous headers) routed to log at warning level. A nil log means
// slog.Default(). It sets no address: Serve takes a listener.
func NewServer(h http.Handler, log *slog.Logger) *http.Server {
	if log == nil {
		log = slog.Default()
	}
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: ReadHeaderTimeout,
		ReadTimeout:       ReadTimeout,
		WriteTimeout:      WriteTimeout,
		IdleTimeout:       IdleTimeout,
		MaxHeaderBytes:    MaxHeaderBytes,
		// "OPTIONS *" reaches the handler, so it gets the security headers
		// like every other answer instead of net/http's bare 200.
		DisableGeneralOptionsHandler: true,
		ErrorLog:                     slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
}

// shutdownTimeout is ShutdownTimeout; tests shorten it.
var shutdownTimeout = ShutdownTimeout

// Serve serves srv on ln until ctx is done, then shuts down gracefully: it
// stops accepting, lets requests in flight finish for up to
// ShutdownTimeout, then closes the connections still open (a long download,
// typically) and reports that through srv.ErrorLog. Being asked to stop is
// a clean end, so Serve returns nil then, even when it had to close
// connections. It returns an error when serving fails on its own (the
// listener breaks) or when srv was shut down by someone else.
func Serve(ctx context.Context, srv *http.Server, ln net.Listener) error {
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()

	select {
	case err := <-errc:
		return fmt.Errorf("web: serve: %w", err)
	case <-ctx.Done():
	}

	sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	err := srv.Shutdown(sctx)
	if err != nil {
		srv.Close()
		logf(srv, "web: requests still running after %s were cut off: %v", shutdownTimeout, err)
	}
	if serr := <-errc; serr != nil && !errors.Is(serr, http.ErrServerClosed) {
		return fmt.Errorf("web: serve: %w", serr)
	}
	return nil
}

func logf(srv *http.Server, format string, args ...any) {
	if srv.ErrorLog != nil {
		srv.ErrorLog.Printf(format, args...)
		return
	}
	log.Printf(format, args...)
}
