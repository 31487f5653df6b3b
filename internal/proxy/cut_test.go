package proxy_test

import (
	"bufio"
	"crypto/tls"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/catalog"
	"github.com/backupweb/backupweb/internal/proxy"
	"github.com/backupweb/backupweb/internal/testkit"
	"github.com/backupweb/backupweb/internal/testkit/logtest"
	"github.com/backupweb/backupweb/internal/web"
)

// cutWait is how long a test waits for a cut connection to close before
// it fails. The contract's bound is closeLimit; the wait is longer so that
// a loaded machine does not fail it, and still far shorter than the tens
// of seconds an uncut connection stays open (it never closes by itself in
// these tests: the client neither sends more nor goes away).
const cutWait = 3 * closeLimit

// closings is a listener that remembers which of its connections the
// server has closed (hijacked ones included), by the client's address.
type closings struct {
	net.Listener
	mu     sync.Mutex
	closed map[string]time.Time
}

func (l *closings) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &closingConn{Conn: c, l: l}, nil
}

// closedAt returns when the server closed the connection from client.
func (l *closings) closedAt(client string) (time.Time, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	at, ok := l.closed[client]
	return at, ok
}

type closingConn struct {
	net.Conn
	l    *closings
	once sync.Once
}

func (c *closingConn) Close() error {
	c.once.Do(func() {
		c.l.mu.Lock()
		c.l.closed[c.RemoteAddr().String()] = time.Now()
		c.l.mu.Unlock()
	})
	return c.Conn.Close()
}

// stallingUpstream is the guarded application of the cut tests: each path
// holds its request in one state until the proxy lets go of it.
type stallingUpstream struct {
	*httptest.Server
	arrived chan string // the path of each request that reached a handler
}

func startStallingUpstream(t *testing.T) *stallingUpstream {
	u := &stallingUpstream{arrived: make(chan string, 16)}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.arrived <- r.URL.Path
		switch r.URL.Path {
		case "/hold": // answers nothing until the request ends
			<-r.Context().Done()
		case "/upload": // reads the whole body first
			io.Copy(io.Discard, r.Body)
			io.WriteString(w, "received\n")
		case "/download": // more than any socket buffer holds
			w.Header().Set("Content-Type", "application/octet-stream")
			chunk := make([]byte, 64<<10)
			for range 4096 {
				if _, err := w.Write(chunk); err != nil {
					return
				}
			}
		case "/events":
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "data: one\n\n")
			http.NewResponseController(w).Flush()
			<-r.Context().Done()
		case "/socket", "/socket-flood":
			conn, rw, err := http.NewResponseController(w).Hijack()
			if err != nil {
				return
			}
			defer conn.Close()
			rw.WriteString("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n")
			rw.Flush()
			if r.URL.Path == "/socket" {
				io.Copy(io.Discard, rw)
				return
			}
			frame := make([]byte, 64<<10)
			for {
				if _, err := conn.Write(frame); err != nil {
					return
				}
			}
		}
	}))
	t.Cleanup(u.Close)
	return u
}

// cutState is one state a proxied connection can be in when its sign-in
// ends.
type cutState struct {
	name string
	// request is written raw after the request line and Host: the rest of
	// the head (cookie added before the blank line) and any body begun.
	method, path, head, body string
	// reached waits until the connection is in the state; reads is
	// whether the client reads what comes (false: it has stopped).
	reached func(t *testing.T, u *stallingUpstream, r *bufio.Reader)
	reads   bool
	// refused: cut before its answer began, the client reads a 401.
	refused bool
}

// arrivedAt waits until the upstream has a request for path.
func arrivedAt(path string) func(*testing.T, *stallingUpstream, *bufio.Reader) {
	return func(t *testing.T, u *stallingUpstream, _ *bufio.Reader) {
		t.Helper()
		select {
		case p := <-u.arrived:
			if p != path {
				t.Fatalf("the upstream got %s, want %s", p, path)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s never reached the upstream", path)
		}
	}
}

// parkedIn waits until a goroutine of this process is parked in a frame
// holding every one of frames: the proxy blocked where the state blocks it.
func parkedIn(frames ...string) func(*testing.T, *stallingUpstream, *bufio.Reader) {
	return func(t *testing.T, _ *stallingUpstream, _ *bufio.Reader) {
		t.Helper()
		testkit.WaitUntil(t, 10*time.Second, func() bool {
			for _, g := range goroutineStacks() {
				all := true
				for _, f := range frames {
					all = all && strings.Contains(g, f)
				}
				if all {
					return true
				}
			}
			return false
		}, func() string { return "no goroutine parked in " + strings.Join(frames, ", ") })
	}
}

// answerBegins reads the answer's head (and, for an event stream, its
// first event).
func answerBegins(status int, firstLine string) func(*testing.T, *stallingUpstream, *bufio.Reader) {
	return func(t *testing.T, _ *stallingUpstream, r *bufio.Reader) {
		t.Helper()
		resp, err := http.ReadResponse(r, nil)
		if err != nil || resp.StatusCode != status {
			t.Fatalf("the answer did not begin: %v %v", resp, err)
		}
		if firstLine != "" {
			if line, err := bufio.NewReader(resp.Body).ReadString('\n'); line != firstLine {
				t.Fatalf("first line %q, %v", line, err)
			}
		}
	}
}

var cutStates = []cutState{
	{name: "waiting for the answer's headers", method: "GET", path: "/hold", reached: arrivedAt("/hold"), reads: true, refused: true},
	{name: "mid-upload, fixed length", method: "POST", path: "/upload",
		head: "Content-Type: application/octet-stream\r\nContent-Length: 10000000\r\n", body: "x",
		// The upstream may not even have the request yet: the proxy
		// waits for the upload's next byte.
		reached: parkedIn("net/http.(*body).Read", "waitRead"), reads: true, refused: true},
	{name: "mid-upload, chunked", method: "POST", path: "/upload",
		head: "Content-Type: application/octet-stream\r\nTransfer-Encoding: chunked\r\n", body: "1\r\nx\r\n",
		reached: parkedIn("net/http.(*body).Read", "waitRead"), reads: true, refused: true},
	{name: "mid-download, the client not reading", method: "GET", path: "/download",
		reached: parkedIn("ReverseProxy).copyResponse", "waitWrite"), reads: false},
	{name: "event stream", method: "GET", path: "/events", head: "Accept: text/event-stream\r\n",
		reached: answerBegins(200, "data: one\n"), reads: true},
	{name: "open WebSocket", method: "GET", path: "/socket",
		head:    "Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n",
		reached: answerBegins(101, ""), reads: true},
	{name: "WebSocket, the client not reading", method: "GET", path: "/socket-flood",
		head:    "Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n",
		reached: parkedIn("copyFromBackend", "waitWrite"), reads: false},
}

// goroutineStacks returns the stack of every goroutine of the process.
func goroutineStacks() []string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return strings.Split(string(buf[:n]), "\n\n")
		}
		buf = make([]byte, 2*len(buf))
	}
}

// settledGoroutines returns the number of goroutines once it has stopped
// changing (connections just closed take a moment to end theirs).
func settledGoroutines(t *testing.T) int {
	t.Helper()
	n, same := runtime.NumGoroutine(), 0
	for deadline := time.Now().Add(5 * time.Second); same < 10 && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
		http.DefaultTransport.(*http.Transport).CloseIdleConnections()
		if m := runtime.NumGoroutine(); m == n {
			same++
		} else {
			n, same = m, 0
		}
	}
	return n
}

// TestCutClosesTheBrowsersSideInEveryState: a proxied connection of a
// signed-in user, written raw on a socket and left in each state a
// connection can be in (waiting for the upstream's headers, mid-upload of
// a fixed length and chunked, mid-download with the client not reading,
// an event stream, an open WebSocket, one the client does not read), is
// closed on the browser's side (the server closes its socket) within
// cutWait of the sign-in ending, by a logout and by the user's removal,
// and every goroutine it took ends.
func TestCutClosesTheBrowsersSideInEveryState(t *testing.T) {
	ends := []struct {
		name string
		end  func(t *testing.T, lp *loginProvider, c *http.Client, base string)
	}{
		{"logout", func(t *testing.T, lp *loginProvider, c *http.Client, base string) { logout(t, lp.p.Manager(), c, base) }},
		{"user removed", func(t *testing.T, lp *loginProvider, _ *http.Client, _ string) {
			writeUsers(t, lp.users, map[string]string{"bob": "pw"})
			lp.p.Reload()
		}},
	}
	for _, end := range ends {
		for _, st := range cutStates {
			t.Run(end.name+"/"+st.name, func(t *testing.T) {
				up := startStallingUpstream(t)
				lp, setup := newLoginSetup(t, map[string]string{"alice": "pw", "bob": "pw"}, auth.Deps{})
				base, ln, logs := guardCounting(t, up.URL, setup)
				alice := jarClient()
				testkit.SignIn(t, alice, testkit.Login{Page: base + "/login", User: "alice", Password: "pw"})
				u, _ := url.Parse(base)
				var cookies []string
				for _, c := range alice.Jar.Cookies(u) {
					cookies = append(cookies, c.Name+"="+c.Value)
				}
				before := settledGoroutines(t)

				conn, err := net.Dial("tcp", u.Host)
				if err != nil {
					t.Fatal(err)
				}
				defer conn.Close()
				if !st.reads {
					// A small window, so that the proxy's writes stall soon.
					conn.(*net.TCPConn).SetReadBuffer(4 << 10)
				}
				head := st.method + " " + st.path + " HTTP/1.1\r\nHost: " + u.Host + "\r\n" + st.head +
					"Cookie: " + strings.Join(cookies, "; ") + "\r\n\r\n" + st.body
				if _, err := io.WriteString(conn, head); err != nil {
					t.Fatal(err)
				}
				r := bufio.NewReader(conn)
				st.reached(t, up, r)

				start := time.Now()
				end.end(t, lp, alice, base)
				client := conn.LocalAddr().String()
				testkit.WaitUntil(t, cutWait, func() bool { _, ok := ln.closedAt(client); return ok },
					func() string {
						return "the browser's side is still open " + time.Since(start).String() + " after the sign-in ended:\n" + logs.String()
					})
				at, _ := ln.closedAt(client)
				t.Logf("closed %s after the sign-in ended", at.Sub(start).Round(time.Millisecond))
				if st.reads {
					// What the client reads ends: with the refusal, or cut.
					conn.SetReadDeadline(time.Now().Add(cutWait))
					if st.refused {
						resp, err := http.ReadResponse(r, nil)
						if err != nil || resp.StatusCode != http.StatusUnauthorized || !resp.Close {
							t.Errorf("cut before its answer began: %v %v, want 401 and the connection's end", resp, err)
						} else if _, err := io.Copy(io.Discard, resp.Body); err != nil {
							t.Errorf("the 401 was cut short: %v", err)
						}
					}
					if _, err := io.Copy(io.Discard, r); err != nil && !isReset(err) {
						t.Errorf("the client's read did not end: %v", err)
					}
				}
				conn.Close()
				alice.CloseIdleConnections()
				var after int
				testkit.WaitUntil(t, cutWait, func() bool { after = settledGoroutines(t); return after <= before },
					func() string {
						return "goroutines: " + strconv.Itoa(before) + " before, " + strconv.Itoa(after) + " after:\n" + strings.Join(goroutineStacks(), "\n\n")
					})
				if !strings.Contains(logs.String(), "proxy: closed a live connection: its sign-in has ended") {
					t.Errorf("no log line:\n%s", logs)
				}
			})
		}
	}
}

// isReset reports whether err is the connection reset a client may read
// when the server closes a socket with data still unread.
func isReset(err error) bool {
	return strings.Contains(err.Error(), "connection reset")
}

// guardCounting is guardWith over a listener that remembers the
// connections the server closed.
func guardCounting(t *testing.T, up string, setup func(string, *slog.Logger) auth.Provider) (string, *closings, *logtest.Buffer) {
	t.Helper()
	base, ln, logs, _ := guardServer(t, up, setup, false)
	return base, ln, logs
}

// guardServer is guardCounting, over TLS with HTTP/2 when h2 is set; it
// returns the server too, whose Client trusts it.
func guardServer(t *testing.T, up string, setup func(string, *slog.Logger) auth.Provider, h2 bool) (string, *closings, *logtest.Buffer, *httptest.Server) {
	t.Helper()
	logs := &logtest.Buffer{}
	log := slog.New(slog.NewTextHandler(logs, nil))
	var h atomic.Pointer[http.Handler]
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { (*h.Load()).ServeHTTP(w, r) }))
	ln := &closings{Listener: srv.Listener, closed: map[string]time.Time{}}
	srv.Listener = ln
	base := "http://" + ln.Addr().String()
	if h2 {
		base = "https://" + ln.Addr().String()
	}
	target, _ := url.Parse(up)
	p := setup(base, log)
	o := proxy.Options{Upstream: target, UserHeader: "X-Forwarded-User", ResponseHeaderTimeout: 30 * time.Second,
		Logger: log, Errors: web.NewErrors(log), Rechecker: p.(auth.Rechecker)}
	handler := web.NewHandler(web.Options{Provider: p, Catalog: catalog.New(t.TempDir()), Logger: log, Proxy: proxy.New(o)})
	h.Store(&handler)
	if h2 {
		srv.EnableHTTP2 = true
		srv.StartTLS()
	} else {
		srv.Start()
	}
	t.Cleanup(srv.Close)
	return base, ln, logs, srv
}

// TestCutOverHTTP2: over HTTP/2, a stalled upload whose sign-in ends is
// answered (or reset) within cutWait, its goroutines end, and the
// browser's connection goes on serving its other requests.
func TestCutOverHTTP2(t *testing.T) {
	up := startStallingUpstream(t)
	lp, setup := newLoginSetup(t, map[string]string{"alice": "pw"}, auth.Deps{})
	base, ln, _, srv := guardServer(t, up.URL, setup, true)
	alice := srv.Client()
	alice.Jar, _ = cookiejar.New(nil)
	alice.Timeout = 20 * time.Second
	testkit.SignIn(t, alice, testkit.Login{Page: base + "/login", User: "alice", Password: "pw"})

	body, feed := io.Pipe()
	defer feed.Close()
	req, _ := http.NewRequest("POST", base+"/upload", body)
	done := make(chan *http.Response, 1)
	go func() {
		resp, err := alice.Do(req)
		if err != nil {
			done <- nil
			return
		}
		resp.Body.Close()
		done <- resp
	}()
	feed.Write([]byte("x"))
	arrivedAt("/upload")(t, up, nil)

	start := time.Now()
	logoutVia(t, lp, alice, base)
	select {
	case resp := <-done:
		if resp != nil && resp.ProtoMajor != 2 {
			t.Fatalf("the upload went over HTTP/%d", resp.ProtoMajor)
		}
		t.Logf("the upload ended %s after the logout: %v", time.Since(start).Round(time.Millisecond), resp != nil && resp.StatusCode == http.StatusUnauthorized)
	case <-time.After(cutWait):
		t.Fatalf("the upload is still open %s after the logout", cutWait)
	}
	parkedNowhere(t, "ReverseProxy")
	// The connection itself goes on: one connection was accepted and
	// none closed.
	resp, err := alice.Get(base + "/login")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	ln.mu.Lock()
	closed := len(ln.closed)
	ln.mu.Unlock()
	if closed != 0 {
		t.Errorf("the server closed %d HTTP/2 connections", closed)
	}
}

// logoutVia signs c out as logout does, through c itself (over HTTP/2:
// another stream of the same connection).
func logoutVia(t *testing.T, lp *loginProvider, c *http.Client, base string) {
	t.Helper()
	m := lp.p.Manager()
	probe, _ := http.NewRequest("GET", base+"/", nil)
	probe.TLS = &tls.ConnectionState{} // as the server reads it: https
	withCookies(c, base)(probe)
	s, ok, err := m.Load(probe)
	if err != nil || !ok {
		t.Fatalf("no session to log out of: %v", err)
	}
	req, _ := http.NewRequest("POST", base+"/logout", nil)
	req.Header.Set("X-CSRF-Token", m.CSRFToken(s))
	cr := *c
	cr.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := cr.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("logout: %d", resp.StatusCode)
	}
}

// parkedNowhere waits until no goroutine's stack holds frame.
func parkedNowhere(t *testing.T, frame string) {
	t.Helper()
	testkit.WaitUntil(t, cutWait, func() bool {
		for _, g := range goroutineStacks() {
			if strings.Contains(g, frame) {
				return false
			}
		}
		return true
	}, func() string {
		return "a goroutine is still in " + frame + ":\n" + strings.Join(goroutineStacks(), "\n\n")
	})
}
