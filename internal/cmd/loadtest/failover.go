package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/backupweb/backupweb/internal/testkit"
)

// passwordEnv names the variable that holds -user's password in the
// failover scenario (a password on the command line would be seen by
// every user of the machine).
const passwordEnv = "LOADTEST_PASSWORD"

// loadEnded is set when the failover scenario's standard input reaches
// its end under -until-eof: its load stops as at the end of -duration.
var loadEnded atomic.Bool

// sessionKind is what a request of the failover scenario carries.
type sessionKind int

const (
	validSession   sessionKind = iota // signed in, never signed out
	revokedSession                    // signed in, then signed out before the load
	noSession                         // no cookie at all
)

// kindOf is what the j-th request of a worker carries: half of them the
// valid session, a quarter the revoked one, a quarter none.
func kindOf(j int) sessionKind {
	switch j % 4 {
	case 1:
		return revokedSession
	case 3:
		return noSession
	}
	return validSession
}

// failoverCounts are the failover scenario's answers, by what they mean.
type failoverCounts struct {
	// With the valid session: admitted (2xx), unavailable (503 with
	// Retry-After), unavailable without Retry-After, signed out (401, or
	// the session cookie cleared), anything else or no answer.
	ok, unavailable, noRetryAfter, signedOut, other atomic.Int64
	// Without a valid session (revoked, or none): admitted (2xx), refused.
	admitted, refused atomic.Int64
}

// failoverRun is a prepared failover scenario: the targets and the
// cookies of the two sessions.
type failoverRun struct {
	targets        []string
	valid, revoked []*http.Cookie
	// names are the session's cookie names: a Set-Cookie that empties one
	// of them signs the session out.
	names []string
}

// prepareFailover signs user in on the first target (the valid session),
// and in again on the last one, then out there (the revoked session).
func prepareFailover(targets []string, user, password string) (*failoverRun, error) {
	f := &failoverRun{targets: targets}
	c := newClient("")
	var err error
	if f.valid, err = signInAs(c, targets[0], user, password); err != nil {
		return nil, fmt.Errorf("%s cannot sign in on %s: %w", user, targets[0], err)
	}
	last := targets[len(targets)-1]
	if f.revoked, err = signInAs(c, last, user, password); err != nil {
		return nil, fmt.Errorf("%s cannot sign in on %s: %w", user, last, err)
	}
	if err := signOut(c, last); err != nil {
		return nil, fmt.Errorf("signing %s out on %s: %w", user, last, err)
	}
	for _, ck := range f.valid {
		f.names = append(f.names, ck.Name)
	}
	return f, nil
}

// signOut posts the logout form of c's session (in its jar) to base.
func signOut(c *http.Client, base string) error {
	req, err := http.NewRequest(http.MethodGet, base+"/", nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "text/html")
	resp, err := c.Do(req)
	if err != nil {
		return fmt.Errorf("GET /: %w", err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	token := testkit.FormToken(page)
	if resp.StatusCode != http.StatusOK || token == "" {
		return fmt.Errorf("no logout form on the catalog page (status %d)", resp.StatusCode)
	}
	form := url.Values{"csrf_token": {token}}
	req, err = http.NewRequestWithContext(context.Background(), http.MethodPost, base+"/logout", strings.NewReader(form.Encode()))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	code, err := do(c, req)
	if err != nil {
		return fmt.Errorf("POST /logout: %w", err)
	}
	if code != http.StatusSeeOther {
		return &statusErr{what: "POST /logout", code: code}
	}
	return nil
}

// send makes one request of kind to base's /api/backups and counts its
// answer; it returns the status for the recorder.
func (f *failoverRun) send(c *http.Client, base string, kind sessionKind, n *failoverCounts) (int, error) {
	req, err := http.NewRequest(http.MethodGet, base+"/api/backups", nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Accept", "application/json")
	cookies := f.valid
	switch kind {
	case revokedSession:
		cookies = f.revoked
	case noSession:
		cookies = nil
	}
	for _, ck := range cookies {
		req.AddCookie(&http.Cookie{Name: ck.Name, Value: ck.Value})
	}
	resp, err := c.Do(req)
	if err != nil {
		if kind == validSession {
			n.other.Add(1)
		}
		return statusError, err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	code := resp.StatusCode
	if kind != validSession {
		if is2xx(code) {
			n.admitted.Add(1)
		} else {
			n.refused.Add(1)
		}
		return code, err
	}
	switch {
	case f.clears(resp):
		n.signedOut.Add(1)
	case is2xx(code):
		n.ok.Add(1)
	case code == http.StatusServiceUnavailable && resp.Header.Get("Retry-After") != "":
		n.unavailable.Add(1)
	case code == http.StatusServiceUnavailable:
		n.noRetryAfter.Add(1)
	case code == http.StatusUnauthorized:
		n.signedOut.Add(1)
	default:
		n.other.Add(1)
	}
	return code, err
}

// clears reports whether resp empties or expires one of the session's
// cookies: the server signed the session out.
func (f *failoverRun) clears(resp *http.Response) bool {
	for _, ck := range resp.Cookies() {
		if slices.Contains(f.names, ck.Name) && (ck.Value == "" || ck.MaxAge < 0) {
			return true
		}
	}
	return false
}

// runFailover loads running instances (-targets) while their store fails
// over: -conns connections, each to the next target in turn, repeat
// requests to /api/backups with the valid session, the revoked one and
// none. It passes when the valid session got only 2xx or 503 with
// Retry-After, and at least one 2xx; nothing else was admitted; and,
// after the load, every target admits the valid session and refuses the
// revoked one.
func runFailover(e *env) []*result {
	const name = "failover"
	o := e.opts
	f, err := prepareFailover(o.targets, o.user, os.Getenv(passwordEnv))
	if err != nil {
		return []*result{failed(name, err)}
	}
	loadEnded.Store(false)
	clients := clientsFrom("", o.conns)
	fmt.Fprintf(e.out, "failover: loading %d targets at %d connections\n", len(o.targets), o.conns)
	if o.untilEOF {
		go func() {
			io.Copy(io.Discard, e.stdin)
			loadEnded.Store(true)
		}()
	}
	var n failoverCounts
	var turns = make([]int, len(clients))
	rec := newRecorder()
	elapsed := steady(clients, o.duration, o.maxRequests, rec, func(i int, c *http.Client) (int, error) {
		j := turns[i] // only worker i touches turns[i]
		turns[i]++
		return f.send(c, o.targets[i%len(o.targets)], kindOf(j), &n)
	})
	closeClients(clients)
	res := rec.result(name, elapsed)
	judgeFailover(res, &n)
	f.after(res)
	return []*result{res}
}

// judgeFailover writes the counts into res and fails it on any answer
// the failover scenario forbids.
func judgeFailover(res *result, n *failoverCounts) {
	res.detail = append(res.detail, fmt.Sprintf(
		"valid session: %d admitted, %d 503 with Retry-After, %d 503 without, %d signed out, %d other or no answer; without a valid session: %d admitted, %d refused",
		n.ok.Load(), n.unavailable.Load(), n.noRetryAfter.Load(), n.signedOut.Load(), n.other.Load(), n.admitted.Load(), n.refused.Load()))
	if v := n.admitted.Load(); v > 0 {
		res.failf("%d requests without a valid session were admitted", v)
	}
	if v := n.signedOut.Load(); v > 0 {
		res.failf("the valid session was signed out %d times", v)
	}
	if v := n.noRetryAfter.Load(); v > 0 {
		res.failf("%d 503s to the valid session had no Retry-After", v)
	}
	if v := n.other.Load(); v > 0 {
		res.failf("%d answers to the valid session were neither 2xx nor 503, or never came", v)
	}
	if n.ok.Load() == 0 {
		res.failf("the valid session was never admitted")
	}
}

// after checks, once the load has ended, that every target admits the
// valid session and refuses the revoked one. A 503 with Retry-After is
// tried again for up to 30 s: the store may still be settling.
func (f *failoverRun) after(res *result) {
	c := newClient("")
	defer c.CloseIdleConnections()
	for _, base := range f.targets {
		for _, kind := range []sessionKind{validSession, revokedSession} {
			deadline := time.Now().Add(30 * time.Second)
			for {
				var n failoverCounts
				code, err := f.send(c, base, kind, &n)
				if code == http.StatusServiceUnavailable && time.Now().Before(deadline) {
					time.Sleep(200 * time.Millisecond)
					continue
				}
				switch {
				case err != nil:
					res.failf("after the load, %s: %v", base, err)
				case kind == validSession && n.ok.Load() != 1:
					res.failf("after the load, %s answered the valid session %d", base, code)
				case kind == revokedSession && n.admitted.Load() != 0:
					res.failf("after the load, %s admitted the session signed out before it", base)
				}
				break
			}
		}
	}
}
