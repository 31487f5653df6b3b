package session

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/testkit/clocktest"
)

// testKey is a 32-byte secret key for tests.
var testKey = []byte("0123456789abcdef0123456789abcdef")

// epoch is the fake clock's starting time.
var epoch = time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)

// fakeClock is a settable clock, safe for concurrent use.
type fakeClock = clocktest.Clock

func newClock() *fakeClock { return clocktest.New(epoch) }

// newTestManager returns a manager over store (a fresh MemoryStore when nil)
// on clock, with o's other fields applied.
func newTestManager(t testing.TB, clock *fakeClock, store Store, o Options) *Manager {
	t.Helper()
	if store == nil {
		store = NewMemoryStore(clock.Now)
	}
	o.Store = store
	if o.Key == nil {
		o.Key = testKey
	}
	o.Now = clock.Now
	m, err := NewManager(o)
	if err != nil {
		t.Fatalf("NewManager: %v", err)
	}
	return m
}

// get returns a GET request for / carrying cookies.
func get(cookies ...*http.Cookie) *http.Request {
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	for _, c := range cookies {
		r.AddCookie(c)
	}
	return r
}

// cookieNamed returns the cookie name set on w, failing when absent.
func cookieNamed(t testing.TB, w *httptest.ResponseRecorder, name string) *http.Cookie {
	t.Helper()
	for _, c := range w.Result().Cookies() {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no %s cookie set; Set-Cookie: %q", name, w.Header().Values("Set-Cookie"))
	return nil
}

// start begins a session for user and returns it with its cookie.
func start(t testing.TB, m *Manager, user string, cookies ...*http.Cookie) (*Session, *http.Cookie) {
	t.Helper()
	w := httptest.NewRecorder()
	s, err := m.Start(w, get(cookies...), Data{Username: user})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	return s, cookieNamed(t, w, m.CookieName())
}

// load loads the session for c, failing on error.
func load(t testing.TB, m *Manager, c *http.Cookie) (*Session, bool) {
	t.Helper()
	s, ok, err := m.Load(get(c))
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return s, ok
}

// countingStore wraps a Store, counts its calls and can fail them.
type countingStore struct {
	Store
	mu                      sync.Mutex
	finds, commits, deletes int
	fail                    error
}

var errStoreDown = errors.New("store down")

func (s *countingStore) Find(ctx context.Context, key string) (Record, bool, error) {
	s.mu.Lock()
	s.finds++
	fail := s.fail
	s.mu.Unlock()
	if fail != nil {
		return Record{}, false, fail
	}
	return s.Store.Find(ctx, key)
}

func (s *countingStore) Commit(ctx context.Context, key string, rec Record) error {
	s.mu.Lock()
	s.commits++
	fail := s.fail
	s.mu.Unlock()
	if fail != nil {
		return fail
	}
	return s.Store.Commit(ctx, key, rec)
}

func (s *countingStore) Delete(ctx context.Context, key string) error {
	s.mu.Lock()
	s.deletes++
	fail := s.fail
	s.mu.Unlock()
	if fail != nil {
		return fail
	}
	return s.Store.Delete(ctx, key)
}

func (s *countingStore) counts() (finds, commits, deletes int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.finds, s.commits, s.deletes
}
