package session

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/attrs"
)

// TestRestart: the session moves to a new id with the new data and a new
// CSRF secret; the old id loads nothing; the time it began is kept, so
// the absolute lifetime ends when it would have; data for another user is
// refused.
func TestRestart(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	m, err := NewManager(Options{Store: NewMemoryStore(func() time.Time { return now }), Key: make([]byte, MinKeyLen),
		Now: func() time.Time { return now }, Lifetime: time.Hour, IdleTimeout: 50 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	with := func(cookie *http.Cookie) *http.Request {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.AddCookie(cookie)
		return r
	}
	w := httptest.NewRecorder()
	first, err := m.Start(w, httptest.NewRequest(http.MethodPost, "/login", nil), Data{Username: "alice", Cred: "c1"})
	if err != nil {
		t.Fatal(err)
	}
	oldCookie := w.Result().Cookies()[0]

	now = now.Add(40 * time.Minute)
	s, ok, err := m.Load(with(oldCookie))
	if err != nil || !ok {
		t.Fatalf("load: %v %v", ok, err)
	}
	if _, err := m.Restart(httptest.NewRecorder(), with(oldCookie), s, Data{Username: "bob"}); err == nil {
		t.Error("restart with another user's data succeeded")
	}
	w = httptest.NewRecorder()
	restarted, err := m.Restart(w, with(oldCookie), s, Data{Username: "alice", Cred: "c1", Attrs: attrs.Of(map[string]string{"reauth": "1"})})
	if err != nil {
		t.Fatal(err)
	}
	newCookie := w.Result().Cookies()[0]
	if newCookie.Value == oldCookie.Value || newCookie.Name != oldCookie.Name {
		t.Fatalf("cookie %s=%s after %s", newCookie.Name, newCookie.Value, oldCookie.Value)
	}
	if _, ok, _ := m.Load(with(oldCookie)); ok {
		t.Error("the old id still loads")
	}
	got, ok, err := m.Load(with(newCookie))
	if err != nil || !ok || got.Attrs.Get("reauth") != "1" || got.Username != "alice" {
		t.Fatalf("the new id: %+v %v %v", got, ok, err)
	}
	if !got.Created.Equal(first.Created) {
		t.Errorf("created %v, want %v", got.Created, first.Created)
	}
	if m.ValidCSRF(restarted, m.CSRFToken(first)) {
		t.Error("the old CSRF token is good for the new id")
	}
	now = now.Add(25 * time.Minute) // 65 minutes after the start, 25 after the restart
	if _, ok, _ := m.Load(with(newCookie)); ok {
		t.Error("the restart extended the session's lifetime")
	}
}
