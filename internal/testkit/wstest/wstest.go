// Package wstest gives tests a real WebSocket upstream (an echo server on
// python3-websockets, which reports its connections opening and closing)
// and the client side of a WebSocket (RFC 6455), enough to send, echo and
// see a connection end: what tests of the proxy and of a reload need.
package wstest

import (
	"bufio"
	"crypto/rand"
	"crypto/sha1"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/testkit"
	"github.com/backupweb/backupweb/internal/testkit/toolstest"
)

// echoScript is a WebSocket echo server on python3-websockets (Debian
// package python3-websockets): it prints its port, then "open" and
// "closed" as connections come and go, so a test can see the upstream's
// side of a connection end too.
const echoScript = `
import asyncio, sys, websockets

async def echo(ws, path=None):
    print("open", flush=True)
    try:
        async for msg in ws:
            await ws.send(msg)
    except websockets.ConnectionClosed:
        pass
    finally:
        print("closed", flush=True)

async def main():
    server = await websockets.serve(echo, "127.0.0.1", 0)
    print(server.sockets[0].getsockname()[1], flush=True)
    await asyncio.Future()

asyncio.run(main())
`

// Echo is a running python WebSocket echo server.
type Echo struct {
	URL    string      // http://127.0.0.1:PORT, for a proxy's upstream
	events chan string // "open", "closed"
}

// StartEcho runs echoScript with Debian's python3 (where
// python3-websockets is installed; a pyenv or venv python3 earlier in PATH
// does not see it) for the rest of the test.
func StartEcho(t testing.TB) *Echo {
	t.Helper()
	const python = "/usr/bin/python3"
	toolstest.Probe(t, python+" with the websockets module (Debian package python3-websockets)", exec.Command(python, "-c", "import websockets"))
	cmd := exec.Command(python, "-c", echoScript)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	testkit.Start(t, cmd)
	lines := bufio.NewScanner(out)
	portc := make(chan string, 1)
	u := &Echo{events: make(chan string, 64)}
	go func() {
		first := true
		for lines.Scan() {
			if first {
				portc <- lines.Text()
				first = false
				continue
			}
			u.events <- lines.Text()
		}
		close(u.events)
	}()
	select {
	case port := <-portc:
		if _, err := strconv.Atoi(port); err != nil {
			t.Fatalf("the echo server said %q instead of its port", port)
		}
		u.URL = "http://127.0.0.1:" + port
	case <-time.After(20 * time.Second):
		t.Fatal("the python WebSocket echo server did not start")
	}
	return u
}

// Wait waits for the upstream to report ev ("open", "closed").
func (u *Echo) Wait(t testing.TB, ev string, within time.Duration) {
	t.Helper()
	deadline := time.After(within)
	for {
		select {
		case got, ok := <-u.events:
			if !ok {
				t.Fatalf("the echo server stopped before %q", ev)
			}
			if got == ev {
				return
			}
		case <-deadline:
			t.Fatalf("the upstream did not report %q within %s", ev, within)
		}
	}
}

// Conn is the client side of a WebSocket (RFC 6455), enough for tests:
// text frames out (masked), frames in.
type Conn struct {
	net.Conn
	br *bufio.Reader
}

// Dial opens a WebSocket to base+path with the cookies and headers mod
// adds to the handshake.
func Dial(t testing.TB, base, path string, mod func(*http.Request)) *Conn {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	key := make([]byte, 16)
	rand.Read(key)
	k := base64.StdEncoding.EncodeToString(key)
	req, _ := http.NewRequest("GET", base+path, nil)
	req.Header.Set("Upgrade", "websocket")
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Sec-WebSocket-Key", k)
	req.Header.Set("Sec-WebSocket-Version", "13")
	if mod != nil {
		mod(req)
	}
	if err := req.Write(conn); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, req)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha1.Sum([]byte(k + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
	if resp.StatusCode != http.StatusSwitchingProtocols || resp.Header.Get("Sec-WebSocket-Accept") != base64.StdEncoding.EncodeToString(sum[:]) {
		body, _ := io.ReadAll(resp.Body)
		t.Fatalf("WebSocket handshake: %d %s", resp.StatusCode, body)
	}
	return &Conn{Conn: conn, br: br}
}

// Echo sends msg and reads the answer, which must be msg.
func (c *Conn) Echo(msg string) error {
	if err := c.Send(msg); err != nil {
		return err
	}
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	got, err := c.Read()
	if err != nil {
		return err
	}
	if got != msg {
		return fmt.Errorf("echo %q, want %q", got, msg)
	}
	return nil
}

// Send writes msg as one masked text frame (payloads under 126 bytes).
func (c *Conn) Send(msg string) error {
	mask := make([]byte, 4)
	rand.Read(mask)
	frame := []byte{0x81, 0x80 | byte(len(msg))}
	frame = append(frame, mask...)
	for i := range len(msg) {
		frame = append(frame, msg[i]^mask[i%4])
	}
	_, err := c.Write(frame)
	return err
}

// Read returns the payload of the next frame; a close frame is an error.
func (c *Conn) Read() (string, error) {
	var h [2]byte
	if _, err := io.ReadFull(c.br, h[:]); err != nil {
		return "", err
	}
	n := int(h[1] & 0x7f)
	switch n {
	case 126:
		var l [2]byte
		if _, err := io.ReadFull(c.br, l[:]); err != nil {
			return "", err
		}
		n = int(binary.BigEndian.Uint16(l[:]))
	case 127:
		return "", errors.New("frame too large for this test client")
	}
	p := make([]byte, n)
	if _, err := io.ReadFull(c.br, p); err != nil {
		return "", err
	}
	if h[0]&0x0f == 0x8 {
		return "", errors.New("close frame")
	}
	return string(p), nil
}

// ClosedWithin reports how long the connection took to end (a read
// returning an error: EOF, reset, a close frame), failing the test past
// limit.
func (c *Conn) ClosedWithin(t testing.TB, limit time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	c.SetReadDeadline(start.Add(limit))
	for {
		if _, err := c.Read(); err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				t.Fatalf("the WebSocket was still open after %s", limit)
			}
			return time.Since(start)
		}
	}
}
