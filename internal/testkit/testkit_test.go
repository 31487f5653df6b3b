package testkit

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"
)

func TestFormToken(t *testing.T) {
	for _, tc := range []struct{ page, want string }{
		{`<form><input type="hidden" name="csrf_token" value="abc-_="></form>`, "abc-_="},
		{`<form><input name="csrf_token" value=""></form>`, ""},
		{`<p>no form</p>`, ""},
		{`<input value="rev" type="hidden" name="csrf_token">`, "rev"},
	} {
		if got := FormToken([]byte(tc.page)); got != tc.want {
			t.Errorf("FormToken(%q) = %q, want %q", tc.page, got, tc.want)
		}
	}
}

// TestSignIn: the form is fetched, its token posted back with the fields,
// and the 303 is not followed.
func TestSignIn(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case "GET":
			http.SetCookie(w, &http.Cookie{Name: "form", Value: "f"})
			w.Write([]byte(`<input name="csrf_token" value="tok">`))
		case "POST":
			c, err := r.Cookie("form")
			if err != nil || c.Value != "f" || r.PostFormValue("csrf_token") != "tok" ||
				r.PostFormValue("username") != "alice" || r.PostFormValue("password") != "pw" || r.PostFormValue("next") != "/x" {
				http.Error(w, "bad form", http.StatusForbidden)
				return
			}
			http.Redirect(w, r, "/x", http.StatusSeeOther)
		}
	}))
	defer srv.Close()
	resp := SignIn(t, Client(), Login{Page: srv.URL + "/login?next=%2Fx", User: "alice", Password: "pw", Next: "/x"})
	if resp.Header.Get("Location") != "/x" {
		t.Fatalf("Location %q", resp.Header.Get("Location"))
	}
	if resp := Post(t, Client(), Login{Page: srv.URL + "/login", User: "alice", Password: "wrong"}); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("a refused sign-in answered %d", resp.StatusCode)
	}
}

// TestWaitUntil: the condition is asked until it holds; one that never
// does fails the test with the sentence given.
func TestWaitUntil(t *testing.T) {
	n := 0
	WaitUntil(t, time.Minute, func() bool { n++; return n == 3 }, func() string { return "never" })
	if n != 3 {
		t.Fatalf("asked %d times, want 3", n)
	}
	ft := &fakeTB{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		WaitUntil(ft, Poll, func() bool { return false }, func() string { return "the reason" })
	}()
	<-done
	if ft.failed != "not so after 10ms: the reason" {
		t.Fatalf("failure %q", ft.failed)
	}
}

type fakeTB struct {
	testing.TB
	failed string
	errors []string
	logged int
}

func (f *fakeTB) Helper() {}
func (f *fakeTB) Errorf(format string, args ...any) {
	f.errors = append(f.errors, fmt.Sprintf(format, args...))
}
func (f *fakeTB) Logf(string, ...any) { f.logged++ }
func (f *fakeTB) Fatalf(format string, args ...any) {
	f.failed = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// TestHashOnce: one bcrypt computation per password and cost, and the
// hash matches.
func TestHashOnce(t *testing.T) {
	a, b := Hash(t, "testkit-pw"), Hash(t, "testkit-pw")
	if a != b {
		t.Fatal("the same password was hashed twice")
	}
	if err := bcrypt.CompareHashAndPassword([]byte(a), []byte("testkit-pw")); err != nil {
		t.Fatal(err)
	}
	if c := HashCost(t, "testkit-pw", bcrypt.MinCost+1); c == a {
		t.Fatal("another cost gave the same hash")
	}
}

// TestBurst: every request is answered and counted by status; the
// connections are opened before the burst.
func TestBurst(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/even" {
			w.WriteHeader(http.StatusTeapot)
		}
	}))
	defer srv.Close()
	got := Burst(t, 10, func(i int) *http.Request {
		path := "/odd"
		if i%2 == 0 {
			path = "/even"
		}
		r, _ := http.NewRequest("GET", srv.URL+path, nil)
		return r
	})
	if got[http.StatusTeapot] != 5 || got[http.StatusOK] != 5 {
		t.Fatalf("statuses %v, want 5 × 418 and 5 × 200", got)
	}
}

func TestHolds(t *testing.T) {
	ft := &fakeTB{TB: t}
	Holds(ft, "<p>one two</p>", []string{"one", "two"}, []string{"three"})
	if len(ft.errors) != 0 || ft.logged != 0 {
		t.Fatalf("a page that holds what it should: %q, %d logs", ft.errors, ft.logged)
	}
	Holds(ft, "<p>one two</p>", []string{"one", "four"}, []string{"two"})
	if want := []string{"page lacks four", "page holds two"}; fmt.Sprint(ft.errors) != fmt.Sprint(want) || ft.logged != 1 {
		t.Fatalf("errors %q, %d logs; want %q and the page once", ft.errors, ft.logged, want)
	}
}

func TestInBackground(t *testing.T) {
	release := make(chan struct{})
	run := InBackground(3, 4, func(g, i int) bool {
		if i == 2 {
			<-release // each goroutine stops at its third call
		}
		return g != 0 || i < 1 // goroutine 0 ends after its second call
	})
	if n := Settled(run.Count); n != 1+2+2 {
		t.Fatalf("settled at %d calls, want 5", n)
	}
	select {
	case <-run.Done:
		t.Fatal("done while two goroutines wait")
	default:
	}
	close(release)
	<-run.Done
	if n := run.Count(); n != 1+4+4 {
		t.Fatalf("%d calls returned true, want 9", n)
	}
}

func TestUsers(t *testing.T) {
	text := Users(t, map[string]string{"alice": "a-pw", "bob": "b-pw"}, "bob", "alice")
	want := "# test users\n\nbob:" + Hash(t, "b-pw") + "\nalice:" + Hash(t, "a-pw") + "\n"
	if text != want {
		t.Fatalf("Users = %q, want %q", text, want)
	}
}

func TestFreeAddr(t *testing.T) {
	addr := FreeAddr(t)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("the address given is not free: %v", err)
	}
	ln.Close()
}
