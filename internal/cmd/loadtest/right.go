package main

import (
	"fmt"
	"net/http"
)

// prepare readies a right-credential part on a started server: it returns
// the clients (one connection each) and the request they repeat.
type prepare func(s *server) ([]*http.Client, request, error)

// loadRight starts a fresh server from spec, runs the steady load of
// prepare's clients for the duration and judges it: every answer a 2xx,
// no "auth refused" line.
func (e *env) loadRight(name string, spec serverSpec, prep prepare) *result {
	s, err := startServer(e.bin, e.dir, spec)
	if err != nil {
		return failed(name, err)
	}
	defer s.stop()
	clients, send, err := prep(s)
	if err != nil {
		return failed(name, err)
	}
	rec := newRecorder()
	elapsed := steady(clients, e.opts.duration, e.opts.maxRequests, rec, send)
	closeClients(clients)
	refused := s.stop()
	res := rec.result(name, elapsed)
	checkRight(res, is2xx, "2xx", refused)
	return res
}

// basicClients: -conns clients from 127.0.0.1 sending alice's right Basic
// password to path, all starting at once on a fresh server (so the first
// requests also find the credential cache empty).
func (e *env) basicClients(path string) prepare {
	return func(s *server) ([]*http.Client, request, error) {
		return clientsFrom("127.0.0.1", e.opts.conns), func(_ int, c *http.Client) (int, error) {
			return get(c, s.base+path, withBasic)
		}, nil
	}
}

// sessionClients: alice signs in once through the form, then -conns
// clients from 127.0.0.1 carry her session cookie to path; browser sets
// Accept: text/html, as a browser does (a refusal is then a redirect).
func (e *env) sessionClients(path string, browser bool) prepare {
	return func(s *server) ([]*http.Client, request, error) {
		cookies, err := signIn(newClient("127.0.0.1"), s.base)
		if err != nil {
			return nil, nil, fmt.Errorf("alice cannot sign in: %w", err)
		}
		clients := make([]*http.Client, e.opts.conns)
		for i := range clients {
			clients[i] = withCookies("127.0.0.1", s.base, cookies)
		}
		accept := "application/json"
		if browser {
			accept = "text/html,application/xhtml+xml"
		}
		return clients, func(_ int, c *http.Client) (int, error) {
			return get(c, s.base+path, func(r *http.Request) { r.Header.Set("Accept", accept) })
		}, nil
	}
}

// runBasic: a right Basic password at -conns connections.
func runBasic(e *env) []*result {
	return []*result{e.loadRight("basic", basicSpec("", ""), e.basicClients("/api/backups"))}
}

// runSession: a valid session at -conns connections.
func runSession(e *env) []*result {
	return []*result{e.loadRight("session", sessionSpec("", ""), e.sessionClients("/api/backups", false))}
}

// runForward: both forward-auth routes, with Basic and with a session,
// each on a fresh server. nginx's /auth/request answers 403 when
// throttled, Traefik's and Caddy's /auth/forward 429 or, for a session
// type and a browser, 302 to the login page: any of them is a failure.
func runForward(e *env) []*result {
	var out []*result
	for _, route := range []string{"/auth/request", "/auth/forward"} {
		out = append(out,
			e.loadRight("forward basic "+route, basicSpec("", ""), e.basicClients(route)),
			e.loadRight("forward session "+route, sessionSpec("", ""), e.sessionClients(route, true)))
	}
	return out
}

// runRedis: the basic and session scenarios with store = redis.
func runRedis(e *env) []*result {
	names := []string{"redis basic", "redis session"}
	rs, skip, err := startRedis(e.dir)
	switch {
	case err != nil:
		return []*result{failed(names[0], err), failed(names[1], err)}
	case skip != "":
		return []*result{{name: names[0], skipped: skip}, {name: names[1], skipped: skip}}
	}
	defer rs.Stop()
	section := func(prefix string) string {
		return fmt.Sprintf("\n[redis]\nurl = redis://%s/0\nprefix = %s\n", rs.Addr(), prefix)
	}
	const store = "store = redis\n"
	return []*result{
		e.loadRight(names[0], basicSpec(store, section("loadtest-basic:")), e.basicClients("/api/backups")),
		e.loadRight(names[1], sessionSpec(store, section("loadtest-session:")), e.sessionClients("/api/backups", false)),
	}
}
