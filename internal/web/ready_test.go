package web

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/catalog"
)

// checkerProvider is a provider whose Ready answers err.
type checkerProvider struct {
	fakeProvider
	mu  sync.Mutex
	err error
}

func (p *checkerProvider) Ready(context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

// checkerFunc is an auth.Checker.
type checkerFunc func(context.Context) error

func (f checkerFunc) Ready(ctx context.Context) error { return f(ctx) }

// TestReadyzSaysOnlyTheKind: /readyz, which anyone can read, names the kind
// of part that is down and nothing else; the addresses and error texts go
// to the log, once per failure however often /readyz is asked, and the
// return to ready is logged once.
func TestReadyzSaysOnlyTheKind(t *testing.T) {
	leak := errors.New("dial tcp 10.20.30.40:6379: connect: connection refused (user backupweb, /var/lib/backupweb/sessions.json)")
	leaky := []string{"10.20.30.40", "6379", "dial tcp", "connection refused", "backupweb,", "/var/lib"}
	tests := []struct {
		name   string
		p      auth.Provider
		shared auth.Checker
		want   string
	}{
		{"session store", &checkerProvider{err: &auth.NotReady{Part: "the session store does not answer", Err: leak}}, nil,
			"not ready: the session store does not answer\n"},
		{"user file", &checkerProvider{err: &auth.NotReady{Part: "the user file is not loaded", Err: leak}}, nil,
			"not ready: the user file is not loaded\n"},
		{"wrapped", &checkerProvider{err: errors.Join(&auth.NotReady{Part: "the user file is not loaded"}, leak)}, nil,
			"not ready: the user file is not loaded\n"},
		{"provider error of no kind", &checkerProvider{err: leak}, nil,
			"not ready: the authentication provider is not ready\n"},
		{"shared store", &checkerProvider{}, checkerFunc(func(context.Context) error { return leak }),
			"not ready: the shared store does not answer\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			log, buf := quietLogger()
			srv := httptest.NewServer(NewHandler(Options{Provider: tt.p, Catalog: catalog.New(t.TempDir()), Logger: log, Ready: tt.shared}))
			defer srv.Close()
			for range 3 {
				resp, err := http.Get(srv.URL + "/readyz")
				if err != nil {
					t.Fatal(err)
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				body := string(b)
				if resp.StatusCode != http.StatusServiceUnavailable || body != tt.want {
					t.Fatalf("/readyz: %d %q, want 503 %q", resp.StatusCode, body, tt.want)
				}
				for _, l := range leaky {
					if strings.Contains(body, l) {
						t.Errorf("/readyz told %q to an unauthenticated client: %q", l, body)
					}
				}
			}
			logged := buf.String()
			if n := strings.Count(logged, "readyz: not ready"); n != 1 || !strings.Contains(logged, "10.20.30.40:6379") {
				t.Errorf("want the detail logged once, got %d lines:\n%s", n, logged)
			}
			if cp, ok := tt.p.(*checkerProvider); ok && tt.shared == nil {
				cp.mu.Lock()
				cp.err = nil
				cp.mu.Unlock()
				for range 2 {
					resp, err := http.Get(srv.URL + "/readyz")
					if err != nil {
						t.Fatal(err)
					}
					resp.Body.Close()
					if resp.StatusCode != http.StatusOK {
						t.Fatalf("/readyz once ready: %d", resp.StatusCode)
					}
				}
				if n := strings.Count(buf.String(), "readyz: ready again"); n != 1 {
					t.Errorf("%d lines for the return to ready, want 1:\n%s", n, buf.String())
				}
			}
		})
	}
}
