package main

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/testkit"
)

// TestReloadCutsStalledTransfers: `backupweb serve` in proxy mode; alice
// holds two connections written raw on sockets, an upload that stopped
// after one byte of 10000000 and a download she stopped reading. A reload
// (SIGHUP) that refuses her, by a new access rule or by removing her from
// the user file, closes both on the browser's side: the upload's client
// reads a 401 and the connection's end, and no goroutine of the program is
// left copying the download or reading the upload.
func TestReloadCutsStalledTransfers(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/upload":
			io.Copy(io.Discard, r.Body)
		case "/download":
			chunk := make([]byte, 64<<10)
			for range 4096 {
				if _, err := w.Write(chunk); err != nil {
					return
				}
			}
		}
	}))
	t.Cleanup(up.Close)
	for _, tt := range []struct {
		name   string
		change func(r *reloadRig)
	}{
		{"access rule", func(r *reloadRig) { r.keys["access.rule1"] = "* ^/ deny user:alice" }},
		{"user removed", func(r *reloadRig) {
			users := r.keys["authentication.users_file"]
			if err := os.WriteFile(users+".new", []byte(testkit.Users(t, map[string]string{"bob": "bob pw"}, "bob")), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(users+".new", users); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := newReloadRigTo(t, up.URL)
			r.t = t
			alice := r.client("alice")
			base, _ := url.Parse(r.base)
			var cookies []string
			for _, c := range alice.Jar.Cookies(base) {
				cookies = append(cookies, c.Name+"="+c.Value)
			}
			open := func(head string, window int) net.Conn {
				c, err := net.Dial("tcp", base.Host)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { c.Close() })
				if window > 0 {
					c.(*net.TCPConn).SetReadBuffer(window)
				}
				io.WriteString(c, strings.Replace(head, "\r\n\r\n", "\r\nHost: "+base.Host+"\r\nCookie: "+strings.Join(cookies, "; ")+"\r\n\r\n", 1))
				return c
			}
			upload := open("POST /upload HTTP/1.1\r\nContent-Length: 10000000\r\n\r\nx", 0)
			open("GET /download HTTP/1.1\r\n\r\n", 4<<10) // never read
			parked := func() (reading, writing bool) {
				for _, g := range programStacks() {
					reading = reading || strings.Contains(g, "net/http.(*body).Read") && strings.Contains(g, "waitRead")
					writing = writing || strings.Contains(g, "ReverseProxy).copyResponse") && strings.Contains(g, "waitWrite")
				}
				return reading, writing
			}
			testkit.WaitUntil(t, 10*time.Second, func() bool { rd, wr := parked(); return rd && wr },
				func() string { return "the upload and the download did not stall" })

			tt.change(r)
			r.write()
			r.hup()
			upload.SetReadDeadline(time.Now().Add(5 * time.Second))
			resp, err := http.ReadResponse(bufio.NewReader(upload), nil)
			if err != nil || resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusForbidden {
				t.Errorf("the stalled upload after the reload: %v %v, want its refusal", resp, err)
			} else if _, err := io.Copy(io.Discard, resp.Body); err != nil || !resp.Close {
				t.Errorf("the stalled upload's connection stays open after its refusal: %v", err)
			}
			testkit.WaitUntil(t, 5*time.Second, func() bool { rd, wr := parked(); return !rd && !wr },
				func() string {
					return "a goroutine still serves a cut transfer:\n" + strings.Join(programStacks(), "\n\n")
				})
			if log := r.s.log.String(); !strings.Contains(log, "closed a live connection") && !strings.Contains(log, "now refuse the user of an open connection") {
				t.Errorf("no line says why the connections were closed:\n%s", log)
			}
		})
	}
}

// programStacks returns the stack of every goroutine of the process.
func programStacks() []string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return strings.Split(string(buf[:n]), "\n\n")
		}
		buf = make([]byte, 2*len(buf))
	}
}
