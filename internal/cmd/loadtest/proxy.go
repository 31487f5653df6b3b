package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// pageAssets is how many assets the guarded page loads at once.
const pageAssets = 30

// upstream is the small guarded interface of the proxy scenario: a page
// naming pageAssets assets, and the assets. It answers 400 to a request
// that does not carry the user backupweb vouches for, or that still
// carries the client's Authorization header, so that a proxy that lets a
// request through without authenticating it fails the scenario too.
func upstream() *httptest.Server {
	page := new(strings.Builder)
	page.WriteString("<!doctype html><title>guarded</title>\n")
	for i := range pageAssets {
		fmt.Fprintf(page, "<link rel=stylesheet href=\"/assets/asset-%02d.css\">\n", i)
	}
	asset := strings.Repeat("/* an asset of the guarded page */\n", 64)
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Header.Get("X-Forwarded-User") != goodUser:
			http.Error(w, "upstream: no X-Forwarded-User: "+goodUser, http.StatusBadRequest)
		case r.Header.Get("Authorization") != "":
			http.Error(w, "upstream: the client's Authorization header reached the upstream", http.StatusBadRequest)
		case r.URL.Path == "/":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Write([]byte(page.String()))
		case strings.HasPrefix(r.URL.Path, "/assets/"):
			w.Header().Set("Content-Type", "text/css")
			w.Write([]byte(asset))
		default:
			http.NotFound(w, r)
		}
	}))
}

// runProxy: backupweb as the reverse proxy (type basic) in front of the
// upstream; a browser with -conns connections loads the page, then its 30
// assets at the same instant, again and again for the duration. The first
// load, on a fresh start, finds the credential cache empty.
func runProxy(e *env) []*result {
	const name = "proxy"
	up := upstream()
	defer up.Close()
	s, err := startServer(e.bin, e.dir, basicSpec("", "\n[proxy]\nupstream = "+up.URL+"\n"))
	if err != nil {
		return []*result{failed(name, err)}
	}
	defer s.stop()
	clients := clientsFrom("127.0.0.1", e.opts.conns)
	rec := newRecorder()
	send := func(c *http.Client, path string) {
		t := time.Now()
		code, err := get(c, s.base+path, withBasic)
		rec.add(code, time.Since(t), err)
	}
	var sent atomic.Int64
	start := time.Now()
	deadline := start.Add(e.opts.duration)
	loads := 0
	for running(deadline) && sent.Add(1+pageAssets) <= e.opts.maxRequests {
		loads++
		send(clients[0], "/")
		var wg sync.WaitGroup
		gate := make(chan struct{})
		for i := range pageAssets {
			c := clients[(1+i)%len(clients)]
			wg.Go(func() {
				<-gate
				send(c, fmt.Sprintf("/assets/asset-%02d.css", i))
			})
		}
		close(gate)
		wg.Wait()
	}
	elapsed := time.Since(start)
	closeClients(clients)
	refused := s.stop()
	res := rec.result(name, elapsed)
	res.detail = append(res.detail, fmt.Sprintf("%d page loads of 1+%d requests", loads, pageAssets))
	checkRight(res, is2xx, "2xx", refused)
	return []*result{res}
}
