package session

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/attrs"
)

func TestStartRotatesID(t *testing.T) {
	clock := newClock()
	store := NewMemoryStore(clock.Now)
	m := newTestManager(t, clock, store, Options{})
	_, before := start(t, m, "alice")
	_, after := start(t, m, "alice", before) // logging in again with the old cookie
	if before.Value == after.Value {
		t.Fatal("Start kept the session id")
	}
	if _, ok := load(t, m, before); ok {
		t.Error("the pre-login cookie still loads")
	}
	if s, ok := load(t, m, after); !ok || s.Username != "alice" {
		t.Errorf("new cookie: ok=%v session=%+v", ok, s)
	}
	if n := store.Len(); n != 1 {
		t.Errorf("store holds %d sessions, want 1", n)
	}
}

func TestDestroyRevokes(t *testing.T) {
	clock := newClock()
	m := newTestManager(t, clock, nil, Options{})
	_, c := start(t, m, "alice")
	if _, ok := load(t, m, c); !ok {
		t.Fatal("fresh session does not load")
	}
	w := httptest.NewRecorder()
	if err := m.Destroy(w, get(c)); err != nil {
		t.Fatalf("Destroy: %v", err)
	}
	cleared := cookieNamed(t, w, DefaultCookieName)
	if cleared.Value != "" || cleared.MaxAge >= 0 {
		t.Errorf("Destroy did not clear the cookie: %q", w.Header().Get("Set-Cookie"))
	}
	if _, ok := load(t, m, c); ok {
		t.Error("replaying the old cookie after Destroy still loads")
	}

	w = httptest.NewRecorder()
	if err := m.Destroy(w, get()); err != nil {
		t.Errorf("Destroy without a session: %v", err)
	}
	cookieNamed(t, w, DefaultCookieName) // cleared anyway
}

func TestExpiry(t *testing.T) {
	const idle, life = 30 * time.Minute, 12 * time.Hour
	type step struct {
		advance time.Duration // before the request
		want    bool
	}
	repeat := func(n int, s step) []step {
		out := make([]step, n)
		for i := range out {
			out[i] = s
		}
		return out
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"just before the idle timeout", []step{{idle - time.Second, true}}},
		{"at the idle timeout", []step{{idle, false}}},
		{"activity extends idle", repeat(10, step{20 * time.Minute, true})},
		{"idle counts from the last activity", []step{{20 * time.Minute, true}, {29 * time.Minute, true}, {30 * time.Minute, false}}},
		// Activity is recorded at most once per minute: a request 30s after
		// the last recorded one is not, so the idle deadline is earlier.
		{"idle precision is one minute", []step{{30 * time.Second, true}, {idle - 30*time.Second, false}}},
		{"activity never extends the lifetime", append(repeat(35, step{20 * time.Minute, true}), step{20 * time.Minute, false})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := newClock()
			m := newTestManager(t, clock, nil, Options{IdleTimeout: idle, Lifetime: life})
			_, c := start(t, m, "alice")
			for i, st := range tt.steps {
				clock.Advance(st.advance)
				s, ok := load(t, m, c)
				if ok != st.want {
					t.Fatalf("step %d (%v after start): ok=%v, want %v", i, clock.Now().Sub(epoch), ok, st.want)
				}
				if ok && s.Expires().After(epoch.Add(life)) {
					t.Fatalf("step %d: Expires %v beyond the lifetime", i, s.Expires())
				}
			}
		})
	}
}

func TestLoadWritesActivitySparingly(t *testing.T) {
	clock := newClock()
	cs := &countingStore{Store: NewMemoryStore(clock.Now)}
	m := newTestManager(t, clock, cs, Options{})
	_, c := start(t, m, "alice")
	steps := []struct {
		advance     time.Duration
		wantCommits int // total, including Start's
	}{
		{10 * time.Second, 1},
		{40 * time.Second, 1},
		{10 * time.Second, 2}, // a minute since the last recorded activity
		{0, 2},
		{59 * time.Second, 2},
		{time.Second, 3},
	}
	for i, st := range steps {
		clock.Advance(st.advance)
		if _, ok := load(t, m, c); !ok {
			t.Fatalf("step %d: session lost", i)
		}
		if _, commits, _ := cs.counts(); commits != st.wantCommits {
			t.Errorf("step %d: %d commits, want %d", i, commits, st.wantCommits)
		}
	}
}

func TestExpiredSessionIsDeleted(t *testing.T) {
	clock := newClock()
	// A store that still returns expired records, to see the manager delete.
	cs := &countingStore{Store: &keepExpired{MemoryStore: NewMemoryStore(clock.Now)}}
	m := newTestManager(t, clock, cs, Options{})
	_, c := start(t, m, "alice")
	clock.Advance(DefaultIdleTimeout)
	if _, ok := load(t, m, c); ok {
		t.Fatal("expired session loaded")
	}
	if _, _, deletes := cs.counts(); deletes != 1 {
		t.Errorf("%d deletes, want 1", deletes)
	}
}

// keepExpired is a store that ignores Expires on Find, as a shared store
// whose own expiry lags might.
type keepExpired struct{ *MemoryStore }

func (k *keepExpired) Find(_ context.Context, key string) (Record, bool, error) {
	k.mu.RLock()
	defer k.mu.RUnlock()
	rec, ok := k.t.recs[key]
	return rec.clone(), ok, nil
}

func TestManagerStoreFailures(t *testing.T) {
	clock := newClock()
	cs := &countingStore{Store: NewMemoryStore(clock.Now)}
	m := newTestManager(t, clock, cs, Options{})
	_, c := start(t, m, "alice")
	cs.fail = errStoreDown

	if _, ok, err := m.Load(get(c)); ok || !errors.Is(err, errStoreDown) || !strings.HasPrefix(err.Error(), "session: ") {
		t.Errorf("Load with a failing store = %v, %v", ok, err)
	}
	w := httptest.NewRecorder()
	if _, err := m.Start(w, get(), Data{Username: "bob"}); !errors.Is(err, errStoreDown) {
		t.Errorf("Start with a failing store: %v", err)
	}
	if len(w.Result().Cookies()) != 0 {
		t.Error("Start set a cookie for a session it could not store")
	}
	w = httptest.NewRecorder()
	if err := m.Destroy(w, get(c)); !errors.Is(err, errStoreDown) {
		t.Errorf("Destroy with a failing store: %v", err)
	}
	cookieNamed(t, w, DefaultCookieName) // the cookie is cleared anyway
	if err := m.DeleteUser(context.Background(), "alice"); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("DeleteUser on a store without UserDeleter: %v", err)
	}
}

func TestSessionDataIsCopied(t *testing.T) {
	clock := newClock()
	m := newTestManager(t, clock, nil, Options{})
	given := map[string]string{"email": "a@example.com", "provider": "github"}
	w := httptest.NewRecorder()
	s, err := m.Start(w, get(), Data{Username: "a@example.com", Attrs: attrs.Of(given)})
	if err != nil {
		t.Fatal(err)
	}
	c := cookieNamed(t, w, DefaultCookieName)
	given["email"] = "caller changed it"
	s.Attrs = s.Attrs.With("provider", "session changed it")
	s.Username = "changed"
	loaded, ok := load(t, m, c)
	if !ok || loaded.Attrs.Get("email") != "a@example.com" || loaded.Attrs.Get("provider") != "github" || loaded.Username != "a@example.com" {
		t.Fatalf("stored data changed through an alias: %+v", loaded)
	}
	loaded.Attrs = loaded.Attrs.Without("email")
	if again, _ := load(t, m, c); again.Attrs.Get("email") != "a@example.com" {
		t.Error("a loaded session aliases the store")
	}
	if _, err := m.Start(httptest.NewRecorder(), get(), Data{}); err == nil {
		t.Error("Start accepted an empty user name")
	}
}

func TestManagerDeleteUser(t *testing.T) {
	forEachStore(t, func(t *testing.T, _ *fakeClock, m *Manager) {
		_, a1 := start(t, m, "alice")
		_, a2 := start(t, m, "alice")
		_, b := start(t, m, "bob")
		if err := m.DeleteUser(context.Background(), "alice"); err != nil {
			t.Fatal(err)
		}
		for c, want := range map[*http.Cookie]bool{a1: false, a2: false, b: true} {
			if _, ok := load(t, m, c); ok != want {
				t.Errorf("after DeleteUser: Load = %v, want %v", ok, want)
			}
		}
	})
}

// forEachStore runs test, in a subtest, with a manager over each kind of
// store (storeKinds) and the fake clock they share.
func forEachStore(t *testing.T, test func(t *testing.T, clock *fakeClock, m *Manager)) {
	for _, kind := range storeKinds {
		t.Run(kind.name, func(t *testing.T) {
			clock := newClock()
			test(t, clock, newTestManager(t, clock, kind.open(t, clock), Options{}))
		})
	}
}

// hookStore runs afterFind between a Find and whatever the manager does next.
type hookStore struct {
	*MemoryStore
	afterFind func()
}

func (h *hookStore) Find(ctx context.Context, key string) (Record, bool, error) {
	rec, ok, err := h.MemoryStore.Find(ctx, key)
	if h.afterFind != nil {
		f := h.afterFind
		h.afterFind = nil
		f()
	}
	return rec, ok, err
}

// TestLogoutRacingRequest: a request that loaded the session just before a
// logout must not bring it back when it records activity.
func TestLogoutRacingRequest(t *testing.T) {
	clock := newClock()
	hs := &hookStore{MemoryStore: NewMemoryStore(clock.Now)}
	m := newTestManager(t, clock, hs, Options{})
	_, c := start(t, m, "alice")
	clock.Advance(2 * time.Minute) // so that the racing Load records activity
	hs.afterFind = func() {
		if err := m.Destroy(httptest.NewRecorder(), get(c)); err != nil {
			t.Errorf("Destroy: %v", err)
		}
	}
	if _, ok := load(t, m, c); !ok {
		t.Fatal("the racing request should still see its session")
	}
	if _, ok := load(t, m, c); ok {
		t.Error("the session came back after logout")
	}
}

func TestConcurrentUse(t *testing.T) {
	forEachStore(t, func(t *testing.T, clock *fakeClock, m *Manager) {
		var wg sync.WaitGroup
		for g := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range 20 {
					w := httptest.NewRecorder()
					s, err := m.Start(w, get(), Data{Username: fmt.Sprintf("u%d", g)})
					if err != nil {
						t.Error(err)
						return
					}
					c := w.Result().Cookies()[0]
					clock.Advance(time.Duration(i) * time.Second)
					if got, ok, err := m.Load(get(c)); !ok || err != nil || got.Username != s.Username {
						t.Errorf("Load: %v %v", ok, err)
					}
					m.CSRFToken(s)
					if err := m.Destroy(httptest.NewRecorder(), get(c)); err != nil {
						t.Error(err)
					}
				}
			}()
		}
		wg.Wait()
	})
}

func TestManagerRefusesAnotherType(t *testing.T) {
	store := NewMemoryStore(nil)
	mk := func(typ string) *Manager {
		m, err := NewManager(Options{Store: store, Key: testKey, Type: typ})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	oauth, login := mk("oauth"), mk("flask-login")
	rec := httptest.NewRecorder()
	if _, err := oauth.Start(rec, httptest.NewRequest("GET", "/", nil), Data{Username: "alice"}); err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest("GET", "/", nil)
	for _, c := range rec.Result().Cookies() {
		req.AddCookie(c)
	}
	if _, ok, _ := oauth.Load(req); !ok {
		t.Fatal("the type that made the session refuses it")
	}
	if _, ok, _ := login.Load(req); ok {
		t.Fatal("a session made by oauth is accepted by flask-login")
	}
	if s, _, _ := oauth.Load(req); s.Type != "oauth" {
		t.Fatalf("session type %q, want oauth", s.Type)
	}
}

func TestFingerprint(t *testing.T) {
	m, _ := NewManager(Options{Store: NewMemoryStore(nil), Key: testKey})
	other, _ := NewManager(Options{Store: NewMemoryStore(nil), Key: []byte("another key of at least 32 bytes!")})
	a, b := m.Fingerprint("$2b$04$hash-one"), m.Fingerprint("$2b$04$hash-two")
	if a == b || a != m.Fingerprint("$2b$04$hash-one") || a == other.Fingerprint("$2b$04$hash-one") {
		t.Fatal("fingerprints must be stable per key and differ per credential and per key")
	}
	if strings.Contains(a, "hash-one") || m.KeyCheck() == other.KeyCheck() {
		t.Fatal("fingerprints must reveal nothing and key checks must differ per key")
	}
}

func TestManagerBoundsSessionsPerUser(t *testing.T) {
	for _, memory := range []bool{true, false} {
		clock := newClock()
		var store Store = NewMemoryStore(clock.Now)
		if !memory {
			fs, err := OpenFileStore(t.TempDir(), clock.Now)
			if err != nil {
				t.Fatal(err)
			}
			defer fs.Close()
			store = fs
		}
		m, err := NewManager(Options{Store: store, Key: testKey, MaxPerUser: 3, Now: clock.Now})
		if err != nil {
			t.Fatal(err)
		}
		var reqs []*http.Request
		for range 5 {
			rec := httptest.NewRecorder()
			if _, err := m.Start(rec, httptest.NewRequest("GET", "/", nil), Data{Username: "alice"}); err != nil {
				t.Fatal(err)
			}
			req := httptest.NewRequest("GET", "/", nil)
			for _, c := range rec.Result().Cookies() {
				req.AddCookie(c)
			}
			reqs = append(reqs, req)
			clock.Advance(time.Second)
		}
		bob := httptest.NewRecorder()
		m.Start(bob, httptest.NewRequest("GET", "/", nil), Data{Username: "bob"})
		for i, req := range reqs {
			_, ok, _ := m.Load(req)
			if want := i >= 2; ok != want {
				t.Errorf("%T: alice's session %d live = %v, want %v (the oldest end first)", store, i, ok, want)
			}
		}
	}
}

// TestUserGenerationEndsWhatDeleteUserMisses: ending a user's sessions
// moves the user's generation, and a session of an older generation is
// refused even when its record is still there: one that the ending did
// not find (put back here, as a missed or tampered index would leave it),
// one made with the old generation by a sign-in racing the ending, and
// after the file store is opened again. Sessions made after are good.
func TestUserGenerationEndsWhatDeleteUserMisses(t *testing.T) {
	ctx := context.Background()
	for _, kind := range storeKinds {
		t.Run(kind.name, func(t *testing.T) {
			clock := newClock()
			store := kind.open(t, clock)
			m := newTestManager(t, clock, store, Options{})
			_, old := start(t, m, "alice")
			_, bob := start(t, m, "bob")
			oldSession, ok := load(t, m, old)
			if !ok {
				t.Fatal("the first session does not load")
			}
			kept, ok, err := store.Find(ctx, oldSession.key)
			if !ok || err != nil || kept.Gen != 0 {
				t.Fatalf("the stored record: %+v %v %v", kept, ok, err)
			}

			if err := m.DeleteUser(ctx, "alice"); err != nil {
				t.Fatal(err)
			}
			// The record comes back, MAC and all: a record the ending
			// did not find.
			if err := store.Commit(ctx, oldSession.key, kept); err != nil {
				t.Fatal(err)
			}
			if _, ok := load(t, m, old); ok {
				t.Error("a session of an older generation loads")
			}
			if _, ok, _ := store.Find(ctx, oldSession.key); ok {
				t.Error("the refused record was left in the store")
			}
			if list, err := m.Sessions(ctx, "alice", nil); err != nil || len(list) != 0 {
				t.Errorf("listed after the ending: %v %v", list, err)
			}

			_, fresh := start(t, m, "alice")
			s, ok := load(t, m, fresh)
			if !ok {
				t.Fatal("a session made after the ending does not load")
			}
			if rec, _, _ := store.Find(ctx, s.key); rec.Gen != 1 {
				t.Errorf("a new session's generation is %d, want 1", rec.Gen)
			}
			if _, ok := load(t, m, bob); !ok {
				t.Error("another user's session ended")
			}
			// A generation number changed by hand breaks the MAC.
			rec, _, _ := store.Find(ctx, s.key)
			rec.Gen = 7
			if err := store.Commit(ctx, s.key, rec); err != nil {
				t.Fatal(err)
			}
			if _, ok := load(t, m, fresh); ok {
				t.Error("a record whose generation was changed loads")
			}

			fs, ok := store.(*FileStore)
			if !ok {
				return
			}
			dir := filepath.Dir(fs.Path())
			if err := fs.Close(); err != nil {
				t.Fatal(err)
			}
			reopened, err := OpenFileStore(dir, clock.Now)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { reopened.Close() })
			if g, err := reopened.UserGeneration(ctx, "alice"); g != 1 || err != nil {
				t.Fatalf("after reopening, alice's generation is %d, %v", g, err)
			}
			m = newTestManager(t, clock, reopened, Options{})
			if err := reopened.Commit(ctx, oldSession.key, kept); err != nil {
				t.Fatal(err)
			}
			if _, ok := load(t, m, old); ok {
				t.Error("after reopening, a session of an older generation loads")
			}
		})
	}
}
