package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeInstances are two HTTP servers that share their sessions, as two
// instances on one store do, and answer /api/backups as told by fault.
type fakeInstances struct {
	mu       sync.Mutex
	sessions map[string]bool // id: signed in and not out
	next     int
	answered atomic.Int64
	// fault is how the valid session's answers go wrong: "" (never),
	// "admit-revoked", "no-retry-after", "sign-out".
	fault string
	urls  []string
}

func startFakes(t *testing.T, fault string) *fakeInstances {
	f := &fakeInstances{sessions: map[string]bool{}, fault: fault}
	for range 2 {
		s := httptest.NewServer(http.HandlerFunc(f.serve))
		t.Cleanup(s.Close)
		f.urls = append(f.urls, s.URL)
	}
	return f
}

const fakeForm = `<form method="post"><input type="hidden" name="csrf_token" value="tok"></form>`

func (f *fakeInstances) serve(w http.ResponseWriter, r *http.Request) {
	sid := ""
	if c, err := r.Cookie("sess"); err == nil {
		sid = c.Value
	}
	f.mu.Lock()
	valid := f.sessions[sid]
	f.mu.Unlock()
	switch r.Method + " " + r.URL.Path {
	case "GET /login", "GET /":
		io.WriteString(w, fakeForm)
	case "POST /login":
		if r.FormValue("username") != "alice" || r.FormValue("password") != "pw" || r.FormValue("csrf_token") != "tok" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		f.mu.Lock()
		f.next++
		sid = fmt.Sprint("s", f.next)
		f.sessions[sid] = true
		f.mu.Unlock()
		http.SetCookie(w, &http.Cookie{Name: "sess", Value: sid, Path: "/"})
		w.WriteHeader(http.StatusSeeOther)
	case "POST /logout":
		f.mu.Lock()
		f.sessions[sid] = false
		f.mu.Unlock()
		http.SetCookie(w, &http.Cookie{Name: "sess", Value: "", Path: "/", MaxAge: -1})
		w.WriteHeader(http.StatusSeeOther)
	case "GET /api/backups":
		n := f.answered.Add(1)
		switch {
		case sid != "" && !valid && f.fault == "admit-revoked":
			w.WriteHeader(http.StatusOK)
		case !valid:
			w.WriteHeader(http.StatusUnauthorized)
		case n%3 == 0 && f.fault == "no-retry-after":
			w.WriteHeader(http.StatusServiceUnavailable)
		case n%3 == 0 && f.fault == "sign-out":
			http.SetCookie(w, &http.Cookie{Name: "sess", Value: "", Path: "/", MaxAge: -1})
			w.WriteHeader(http.StatusOK)
		case n%3 == 0:
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusServiceUnavailable)
		default:
			io.WriteString(w, "[]")
		}
	default:
		http.NotFound(w, r)
	}
}

// TestFailoverScenario: against instances that answer the valid session
// 2xx or 503 with Retry-After and refuse the others, the scenario passes
// and prints its counts; each way of going wrong fails it.
func TestFailoverScenario(t *testing.T) {
	t.Setenv(passwordEnv, "pw")
	for _, tt := range []struct{ fault, want string }{
		{"", ""},
		{"admit-revoked", "without a valid session were admitted"},
		{"no-retry-after", "had no Retry-After"},
		{"sign-out", "was signed out"},
	} {
		t.Run("fault="+tt.fault, func(t *testing.T) {
			f := startFakes(t, tt.fault)
			var out bytes.Buffer
			e := &env{opts: options{targets: f.urls, user: "alice", conns: 4, duration: time.Hour, maxRequests: 400}, out: &out}
			res := runFailover(e)[0]
			t.Log(out.String() + res.line())
			if !strings.Contains(out.String(), "failover: loading 2 targets at 4 connections") {
				t.Errorf("no loading line: %q", out.String())
			}
			if !strings.Contains(res.line(), "valid session: ") || res.requests != 400 {
				t.Errorf("no counts, or not 400 requests: %s", res.line())
			}
			switch {
			case tt.want == "" && !res.passed():
				t.Errorf("failed: %s", res.line())
			case tt.want != "" && (res.passed() || !strings.Contains(res.line(), tt.want)):
				t.Errorf("want a failure with %q: %s", tt.want, res.line())
			}
		})
	}
}

// TestFailoverUntilEOF: with -until-eof the load ends when standard
// input does, long before -duration and -max-requests.
func TestFailoverUntilEOF(t *testing.T) {
	t.Setenv(passwordEnv, "pw")
	f := startFakes(t, "")
	r, w := io.Pipe()
	go func() {
		for f.answered.Load() < 200 {
			time.Sleep(time.Millisecond)
		}
		w.Close()
	}()
	e := &env{opts: options{targets: f.urls, user: "alice", conns: 4, duration: time.Hour, maxRequests: 1 << 40, untilEOF: true},
		out: io.Discard, stdin: r}
	res := runFailover(e)[0]
	if !res.passed() || res.requests < 200 {
		t.Errorf("%s", res.line())
	}
}

// TestFailoverWrongPassword: a sign-in that fails fails the scenario
// before any load.
func TestFailoverWrongPassword(t *testing.T) {
	t.Setenv(passwordEnv, "wrong")
	f := startFakes(t, "")
	res := runFailover(&env{opts: options{targets: f.urls, user: "alice", conns: 4, duration: time.Hour, maxRequests: 10}, out: io.Discard})[0]
	if res.passed() || !strings.Contains(res.line(), "cannot sign in") || f.answered.Load() != 0 {
		t.Errorf("%s", res.line())
	}
}
