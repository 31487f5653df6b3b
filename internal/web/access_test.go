package web

import (
	"bufio"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/accesslog"
	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/catalog"
	"github.com/backupweb/backupweb/internal/testkit"
	"github.com/backupweb/backupweb/internal/testkit/logtest"
)

// TestAccessLog: one line per request with method, path, status, bytes,
// duration, client and user; never the query string, headers or cookies.
func TestAccessLog(t *testing.T) {
	var logs logtest.Buffer
	p := &fakeProvider{admit: true, user: auth.User{Name: "alice", Type: "fake"}}
	h := NewHandler(Options{Provider: p, Catalog: catalog.New(t.TempDir()), Logger: slog.New(slog.NewTextHandler(&logs, nil)), AccessLog: true})
	srv := httptest.NewServer(h)
	defer srv.Close()
	req, _ := http.NewRequest("GET", srv.URL+"/api/backups?code=SECRETCODE&state=SECRETSTATE", nil)
	req.AddCookie(&http.Cookie{Name: "backupweb_session", Value: "SECRETCOOKIE"})
	req.Header.Set("Authorization", "Bearer SECRETTOKEN")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	http.Get(srv.URL + "/healthz")
	out := logs.String()
	for _, secret := range []string{"SECRETCODE", "SECRETSTATE", "SECRETCOOKIE", "SECRETTOKEN", "code=", "state="} {
		if strings.Contains(out, secret) {
			t.Errorf("the access log holds %q:\n%s", secret, out)
		}
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 {
		t.Fatalf("want one line per request, got:\n%s", out)
	}
	for _, want := range []string{"msg=request", "method=GET", "path=/api/backups", "status=200", "bytes=", "duration=", "client=127.0.0.1", "user=alice"} {
		if !strings.Contains(lines[0], want) {
			t.Errorf("access line lacks %s: %s", want, lines[0])
		}
	}
	if strings.Contains(lines[1], "user=") || !strings.Contains(lines[1], "path=/healthz") {
		t.Errorf("unprotected request line: %s", lines[1])
	}

	var quiet logtest.Buffer
	h = NewHandler(Options{Provider: p, Catalog: catalog.New(t.TempDir()), Logger: slog.New(slog.NewTextHandler(&quiet, nil))})
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/healthz", nil))
	if quiet.String() != "" {
		t.Errorf("access_log off still logs:\n%s", quiet.String())
	}
}

type recordingObserver struct{ routes []string }

func (o *recordingObserver) Served(route string, status int, _ time.Duration) {
	o.routes = append(o.routes, route+" "+http.StatusText(status))
}

// TestObserverSeesRoutePatterns: the observer gets the route pattern, never
// the raw path, so metric labels stay bounded; the catalog root reads
// "GET /", without the mux's end-of-path marker.
func TestObserverSeesRoutePatterns(t *testing.T) {
	obs := &recordingObserver{}
	p := &fakeProvider{admit: true, user: auth.User{Name: "alice", Type: "fake"}}
	h := NewHandler(Options{Provider: p, Catalog: catalog.New(t.TempDir()), Observer: obs})
	for _, path := range []string{"/backups/a-secret-name.tar", "/no/such/page", "/api/me", "/"} {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", path, nil))
	}
	want := []string{"GET /backups/{path...} Not Found", " Not Found", "GET /api/me OK", "GET / OK"}
	if strings.Join(obs.routes, "|") != strings.Join(want, "|") {
		t.Fatalf("observed %q, want %q", obs.routes, want)
	}
}

// notReady is a provider whose Ready fails.
type notReady struct{ fakeProvider }

func (notReady) Ready(context.Context) error { return errors.New("session store: unreachable") }

func TestReadyz(t *testing.T) {
	h, _ := noneHandler(t)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/readyz", nil))
	if rec.Code != 200 || rec.Body.String() != "ready" || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/plain") {
		t.Fatalf("/readyz: %d %q", rec.Code, rec.Body.String())
	}
	h = NewHandler(Options{Provider: &notReady{}, Catalog: catalog.New(t.TempDir())})
	for _, path := range []string{"/readyz", "/healthz"} {
		rec = httptest.NewRecorder()
		req := httptest.NewRequest("GET", path, nil)
		req.Header.Set("Accept", "application/json")
		h.ServeHTTP(rec, req)
		if path == "/healthz" {
			if rec.Code != 200 || rec.Body.String() != "ok" {
				t.Errorf("/healthz must stay ok: %d %q", rec.Code, rec.Body.String())
			}
			continue
		}
		if rec.Code != 503 || rec.Body.String() != "not ready: the authentication provider is not ready\n" || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/plain") {
			t.Errorf("/readyz when not ready: %d %q %q", rec.Code, rec.Body.String(), rec.Header().Get("Content-Type"))
		}
	}
}

// TestAccessLogStalledDestination: when nobody reads the access log's
// destination, requests wait for it (no line dropped, the buffer bounded),
// and they all complete once it is read again.
func TestAccessLogStalledDestination(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	buf := accesslog.NewBuffer(w, 1<<10, 10*time.Millisecond)
	defer buf.Close()
	p := &fakeProvider{admit: true, user: auth.User{Name: "alice", Type: "fake"}}
	h := NewHandler(Options{Provider: p, Catalog: catalog.New(t.TempDir()), Logger: slog.New(slog.DiscardHandler),
		AccessLog: true, AccessLogger: accesslog.NewWriter(buf, accesslog.Text)})
	srv := httptest.NewServer(h)
	defer srv.Close()

	// About 120 bytes a line: 2,000 lines are more than the pipe (64 KiB)
	// and the buffers hold.
	const clients, each = 8, 250
	run := testkit.InBackground(clients, each, func(int, int) bool {
		resp, err := srv.Client().Get(srv.URL + "/healthz")
		if err != nil {
			t.Error(err)
			return false
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return true
	})
	testkit.Settled(run.Count)
	select {
	case <-run.Done:
		t.Fatal("every request completed while nobody read the log: lines were dropped or buffered without bound")
	default:
	}

	lines := make(chan int, 1)
	go func() {
		n := 0
		sc := bufio.NewScanner(r)
		for n < clients*each && sc.Scan() {
			if strings.Contains(sc.Text(), "msg=request method=GET path=/healthz status=200") {
				n++
			}
		}
		lines <- n
	}()
	select {
	case <-run.Done:
	case <-time.After(time.Minute):
		t.Fatalf("requests did not resume: %d of %d answered", run.Count(), clients*each)
	}
	buf.Flush()
	if n := <-lines; n != clients*each {
		t.Fatalf("%d access lines, want %d", n, clients*each)
	}
}
