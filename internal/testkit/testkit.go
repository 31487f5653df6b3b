// Package testkit holds what the end-to-end tests of every package share,
// so that none writes it again: a browser-like client, the CSRF token of a
// page's form, signing in through the login form, waiting until something
// holds, and bcrypt hashes of test passwords computed once per process.
// It also starts outside servers for a test. It is imported by tests
// only.
package testkit

import (
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/backupweb/backupweb/internal/testkit/logtest"
	"github.com/backupweb/backupweb/internal/testkit/porttest"
)

// Client returns an HTTP client with a cookie jar that does not follow
// redirects, so that a test sees every 302 and 303 as a browser's address
// bar would.
func Client() *http.Client {
	jar, err := cookiejar.New(nil)
	if err != nil {
		panic(err) // cookiejar.New with nil options never fails
	}
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// tokenField finds the csrf_token of a form: as every page of the
// program writes it, or with its attributes the other way round.
var tokenField = regexp.MustCompile(`name="csrf_token"[^>]*value="([^"]+)"|value="([^"]+)"[^>]*name="csrf_token"`)

// FormToken returns the csrf_token of the first form in page, or "" when
// page holds none.
func FormToken(page []byte) string {
	m := tokenField.FindSubmatch(page)
	if m == nil {
		return ""
	}
	return string(m[1]) + string(m[2])
}

// Token gets pageURL with c and returns its form's csrf_token; it fails t
// when the page is not 200 or holds no form.
func Token(t testing.TB, c *http.Client, pageURL string) string {
	t.Helper()
	resp, err := c.Get(pageURL)
	if err != nil {
		t.Fatalf("GET %s: %v", pageURL, err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	tok := FormToken(page)
	if resp.StatusCode != http.StatusOK || tok == "" {
		t.Fatalf("GET %s: %d, no form with a csrf_token:\n%s", pageURL, resp.StatusCode, page)
	}
	return tok
}

// Login is one sign-in through a login form.
type Login struct {
	// Page is the login page's URL ("http://127.0.0.1:8080/login").
	Page string
	// User and Password are what is typed.
	User, Password string
	// Next, when set, is the form's next field.
	Next string
	// Form, when set, is where the form is posted; default Page.
	Form string
}

// SignIn signs c in through l's form: it gets the page, reads its CSRF
// token and posts the form (without following the redirect). It fails t
// unless the answer is 303, and returns that answer (its body closed), so
// that the test can check where it leads.
func SignIn(t testing.TB, c *http.Client, l Login) *http.Response {
	t.Helper()
	resp := Post(t, c, l)
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign-in of %s at %s: %d, want 303", l.User, l.Page, resp.StatusCode)
	}
	return resp
}

// Post is SignIn without a verdict: it posts l's form with the page's
// CSRF token and returns whatever is answered (its body closed), for tests
// of refused sign-ins.
func Post(t testing.TB, c *http.Client, l Login) *http.Response {
	t.Helper()
	form := url.Values{"username": {l.User}, "password": {l.Password}, "csrf_token": {Token(t, c, l.Page)}}
	if l.Next != "" {
		form.Set("next", l.Next)
	}
	nf := *c // the redirect is the test's to follow
	nf.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	target := l.Form
	if target == "" {
		target = l.Page
	}
	if i := strings.IndexByte(target, '?'); i >= 0 {
		target = target[:i]
	}
	resp, err := nf.PostForm(target, form)
	if err != nil {
		t.Fatalf("posting the login form at %s: %v", target, err)
	}
	resp.Body.Close()
	return resp
}

// Holds checks a page or any text a test got: it marks t failed (and goes
// on) for each of want that page lacks and each of dontWant it holds, and
// then shows the page once.
func Holds(t testing.TB, page string, want, dontWant []string) {
	t.Helper()
	failed := false
	for _, w := range want {
		if !strings.Contains(page, w) {
			t.Errorf("page lacks %s", w)
			failed = true
		}
	}
	for _, w := range dontWant {
		if strings.Contains(page, w) {
			t.Errorf("page holds %s", w)
			failed = true
		}
	}
	if failed {
		t.Logf("the page:\n%s", page)
	}
}

// Poll is how often WaitUntil asks again.
const Poll = 10 * time.Millisecond

// WaitUntil asks cond every Poll until it holds, and fails t when it still
// does not after within, with the sentence why returns then (it may show
// a log or a server's output as it is at that moment). It waits for
// something that will happen; it never measures how long that took.
func WaitUntil(t testing.TB, within time.Duration, cond func() bool, why func() string) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not so after %s: %s", within, why())
		}
		time.Sleep(Poll)
	}
}

// WaitListening waits until addr (host:port) accepts TCP connections, for
// within at most; detail, when t fails, says what the server wrote.
func WaitListening(t testing.TB, addr string, within time.Duration, detail func() string) {
	t.Helper()
	WaitUntil(t, within, func() bool {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
		}
		return err == nil
	}, func() string { return "nothing listens on " + addr + ":\n" + detail() })
}

// FreeAddr returns a loopback address, 127.0.0.1:port, that nothing
// listened on a moment ago: where a server the test starts may listen.
// The port lies outside the ephemeral range (porttest.Free), so that no
// other test's connection takes it before the server binds it.
func FreeAddr(t testing.TB) string {
	t.Helper()
	port, err := porttest.Free()
	if err != nil {
		t.Fatal(err)
	}
	return "127.0.0.1:" + strconv.Itoa(port)
}

// Start starts cmd, an outside program, for the rest of the test: in a
// process group of its own, which is killed whole when the test ends, so
// that nothing it started (a monitor's child, a server's workers)
// outlives the test. cmd's environment carries a mark of its own
// (LeakMark), which every process it starts inherits: once the group is
// killed, any process still running with that mark has left the group
// (a daemon, a monitor's child in a group of its own), and the test
// fails naming it, after killing it.
func Start(t testing.TB, cmd *exec.Cmd) {
	t.Helper()
	ownGroup(cmd)
	mark := newMark()
	cmd.Env = append(cmd.Environ(), LeakMark+"="+mark)
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", cmd.Path, err)
	}
	t.Cleanup(func() {
		killGroup(cmd)
		cmd.Wait()
		for _, p := range marked(mark) {
			t.Errorf("%s left a process running after the test: pid %d (%s); it was killed now", cmd.Path, p.pid, p.name)
		}
	})
}

// LeakMark is the environment variable Start sets, to a value of its own
// for each program it starts, to find what that program left behind.
const LeakMark = "BACKUPWEB_TEST_PROCESS"

var marks atomic.Uint64

// newMark returns a mark no other program started by this test process
// has.
func newMark() string {
	return strconv.Itoa(os.Getpid()) + "-" + strconv.FormatUint(marks.Add(1), 10)
}

// StartServer starts cmd, an outside server (nginx, Caddy, gunicorn...),
// for the rest of the test as Start does, with its standard output and
// error collected, and waits until it accepts connections on addr, for
// within at most. When it does not, t fails with the output, and with
// what more returns when not nil (a log file the server writes).
func StartServer(t testing.TB, cmd *exec.Cmd, addr string, within time.Duration, more func() string) {
	t.Helper()
	var out logtest.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	Start(t, cmd)
	WaitListening(t, addr, within, func() string {
		if more == nil {
			return out.String()
		}
		return out.String() + more()
	})
}

// Users is the text of a test user file: a comment, a blank line, and a
// line name:hash for each of names, hashed (Hash) from passwords[name].
func Users(t testing.TB, passwords map[string]string, names ...string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("# test users\n\n")
	for _, n := range names {
		b.WriteString(n + ":" + Hash(t, passwords[n]) + "\n")
	}
	return b.String()
}

var hashes sync.Map // "cost\x00password" -> hash

// Hash returns a bcrypt hash of pw at bcrypt.MinCost, computed once per
// test process: tests that need a user file or a hashed password do not
// pay for bcrypt again and again.
func Hash(t testing.TB, pw string) string {
	t.Helper()
	return HashCost(t, pw, bcrypt.MinCost)
}

// HashCost is Hash at cost, for the tests that count or load bcrypt work
// at a realistic cost.
func HashCost(t testing.TB, pw string, cost int) string {
	t.Helper()
	key := strconv.Itoa(cost) + "\x00" + pw
	if h, ok := hashes.Load(key); ok {
		return h.(string)
	}
	h, err := bcrypt.GenerateFromPassword([]byte(pw), cost)
	if err != nil {
		t.Fatalf("bcrypt of a test password: %v", err)
	}
	actual, _ := hashes.LoadOrStore(key, string(h))
	return actual.(string)
}

// Burst sends n requests at the same instant, the i-th made by req(i), and
// counts the statuses they get. Every connection is opened first (with a
// request to /healthz of the same host), then the n requests are released
// together by a barrier, so that they race at the server as a burst of
// users does.
func Burst(t testing.TB, n int, req func(i int) *http.Request) map[int]int {
	t.Helper()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: n, MaxConnsPerHost: n}}
	t.Cleanup(client.CloseIdleConnections)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			warm := req(i)
			warm.URL.Path = "/healthz"
			if resp, err := client.Do(warm); err == nil {
				resp.Body.Close()
			}
		})
	}
	wg.Wait()
	return AtOnce(n, func(i int) func() int {
		r := req(i)
		return func() int {
			resp, err := client.Do(r)
			if err != nil {
				t.Error(err)
				return 0
			}
			resp.Body.Close()
			return resp.StatusCode
		}
	})
}

// AtOnce runs n goroutines: the i-th prepares with ready(i), then waits
// at a barrier that opens once all n are started, and runs what ready
// returned, so that the n calls race each other. It counts the statuses
// they return (0, for a request that got no answer, is not counted).
func AtOnce(n int, ready func(i int) func() int) map[int]int {
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		statuses = map[int]int{}
		barrier  = make(chan struct{})
	)
	for i := range n {
		wg.Go(func() {
			do := ready(i)
			<-barrier
			if status := do(); status != 0 {
				mu.Lock()
				statuses[status]++
				mu.Unlock()
			}
		})
	}
	close(barrier)
	wg.Wait()
	return statuses
}

// Run is work going on in the background (InBackground): how many calls
// of it returned so far, and whether all have.
type Run struct {
	// Done is closed once every call has returned.
	Done <-chan struct{}
	n    atomic.Int64
}

// Count is how many calls returned so far.
func (r *Run) Count() int64 { return r.n.Load() }

// InBackground calls work(g, i) for each i < each on n goroutines g at
// once, and returns at once: for tests of back-pressure, which see the
// calls come to a stop (Settled over Count, Done still open) and then
// resume. A call that returns false ends its goroutine's calls.
func InBackground(n, each int, work func(g, i int) bool) *Run {
	done := make(chan struct{})
	r := &Run{Done: done}
	go func() {
		var wg sync.WaitGroup
		for g := range n {
			wg.Go(func() {
				for i := range each {
					if !work(g, i) {
						return
					}
					r.n.Add(1)
				}
			})
		}
		wg.Wait()
		close(done)
	}()
	return r
}

// Settled waits until count stops moving (the same value at five readings
// 50 ms apart) and returns that value: for tests that must see work come
// to a stop (writers blocked on a full buffer) rather than finish.
func Settled(count func() int64) int64 {
	last := int64(-1)
	for stable := 0; stable < 5; {
		time.Sleep(50 * time.Millisecond)
		if n := count(); n == last {
			stable++
		} else {
			last, stable = n, 0
		}
	}
	return last
}
