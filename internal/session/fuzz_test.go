package session

import (
	"testing"
	"time"
)

// FuzzUntrusted feeds arbitrary browser-supplied text to every parser of
// untrusted input: none may panic, and none may accept what it did not issue.
func FuzzUntrusted(f *testing.F) {
	f.Add("", "")
	f.Add("AQ", "x")
	f.Add("AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA")
	clock := newClock()
	m := newTestManager(f, clock, nil, Options{})
	s, _ := start(f, m, "alice")
	f.Fuzz(func(t *testing.T, cookie, token string) {
		if _, err := m.Open("oauth-flow", cookie); err == nil {
			t.Errorf("Open accepted %q", cookie)
		}
		if m.ValidCSRF(s, token) {
			t.Errorf("ValidCSRF accepted %q", token)
		}
		r := get()
		r.Header.Set("Cookie", DefaultFormCookieName+"="+cookie+"; "+DefaultCookieName+"="+cookie)
		if m.CheckFormToken(r, token) {
			t.Errorf("CheckFormToken accepted %q with cookie %q", token, cookie)
		}
		if _, ok, err := m.Load(r); ok || err != nil {
			t.Errorf("Load(%q) = %v, %v", cookie, ok, err)
		}
		if got, err := m.Seal("fuzz", []byte(cookie), time.Minute); err == nil {
			if back, err := m.Open("fuzz", got); err != nil || string(back) != cookie {
				t.Errorf("Seal/Open round trip of %q: %q, %v", cookie, back, err)
			}
		}
	})
}
