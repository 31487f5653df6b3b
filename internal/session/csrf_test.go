package session

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// flip changes one character of s at i to another valid base64url one.
func flip(s string, i int) string {
	b := []byte(s)
	if b[i] == 'A' {
		b[i] = 'B'
	} else {
		b[i] = 'A'
	}
	return string(b)
}

func TestSessionCSRF(t *testing.T) {
	clock := newClock()
	m := newTestManager(t, clock, nil, Options{})
	other := newTestManager(t, clock, nil, Options{Key: []byte(strings.Repeat("k", 32))})
	alice, c := start(t, m, "alice")
	bob, _ := start(t, m, "bob")
	loaded, _ := load(t, m, c)

	tok := m.CSRFToken(alice)
	if tok2 := m.CSRFToken(alice); tok2 == tok {
		t.Error("tokens are not masked per render")
	}
	formTok := m.FormToken(httptest.NewRecorder(), get())
	tests := []struct {
		name  string
		s     *Session
		token string
		want  bool
	}{
		{"own token", alice, tok, true},
		{"another render of it", alice, m.CSRFToken(alice), true},
		{"same session, loaded again", loaded, tok, true},
		{"the session's own", alice, alice.CSRFToken(), true},
		{"the loaded session's own", loaded, loaded.CSRFToken(), true},
		{"the other manager's session's own", alice, func() *Session { s, _ := start(t, other, "alice"); return s }().CSRFToken(), false},
		{"other session's token", bob, tok, false},
		{"token for the other session", alice, m.CSRFToken(bob), false},
		{"other secret key", alice, other.CSRFToken(alice), false},
		{"empty", alice, "", false},
		{"tampered first half", alice, flip(tok, 3), false},
		{"tampered second half", alice, flip(tok, 60), false},
		{"truncated", alice, tok[:len(tok)-1], false},
		{"login form token", alice, formTok, false},
		{"nil session", nil, tok, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := m.ValidCSRF(tt.s, tt.token); got != tt.want {
				t.Errorf("ValidCSRF = %v, want %v", got, tt.want)
			}
		})
	}
	if m.CSRFToken(nil) != "" {
		t.Error("CSRFToken(nil) is not empty")
	}
}

func TestFormToken(t *testing.T) {
	clock := newClock()
	m := newTestManager(t, clock, nil, Options{})
	other := newTestManager(t, clock, nil, Options{Key: []byte(strings.Repeat("k", 32))})

	w := httptest.NewRecorder()
	tok := m.FormToken(w, get())
	fc := cookieNamed(t, w, DefaultFormCookieName)
	if !fc.HttpOnly || fc.SameSite != http.SameSiteLaxMode || fc.Path != "/" || fc.Secure || fc.MaxAge != 0 {
		t.Errorf("form cookie flags: %+v", fc)
	}

	// With the cookie present, FormToken reuses it and sets nothing.
	w2 := httptest.NewRecorder()
	tok2 := m.FormToken(w2, get(fc))
	if len(w2.Result().Cookies()) != 0 {
		t.Error("FormToken replaced a valid cookie")
	}
	if tok2 == tok {
		t.Error("form tokens are not masked per render")
	}

	w3 := httptest.NewRecorder()
	otherTok := m.FormToken(w3, get())
	otherCookie := cookieNamed(t, w3, DefaultFormCookieName)
	forged := &http.Cookie{Name: DefaultFormCookieName, Value: flip(fc.Value, 5)}
	foreign := httptest.NewRecorder()
	foreignTok := other.FormToken(foreign, get())
	foreignCookie := cookieNamed(t, foreign, DefaultFormCookieName)
	_, sc := start(t, m, "alice")
	sess, _ := load(t, m, sc)

	tests := []struct {
		name   string
		cookie *http.Cookie
		token  string
		want   bool
	}{
		{"token and its cookie", fc, tok, true},
		{"reused cookie's token", fc, tok2, true},
		{"missing cookie", nil, tok, false},
		{"empty token", fc, "", false},
		{"tampered token", fc, flip(tok, 70), false},
		{"token bound to another cookie", fc, otherTok, false},
		{"cookie of the other token", otherCookie, tok, false},
		{"forged cookie signature", forged, tok, false},
		{"cookie and token under another key", foreignCookie, foreignTok, false},
		{"session token", fc, m.CSRFToken(sess), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPost, "/login", nil)
			if tt.cookie != nil {
				r.AddCookie(tt.cookie)
			}
			if got := m.CheckFormToken(r, tt.token); got != tt.want {
				t.Errorf("CheckFormToken = %v, want %v", got, tt.want)
			}
		})
	}

	// A forged cookie is replaced, not reused.
	w4 := httptest.NewRecorder()
	m.FormToken(w4, get(forged))
	if c := cookieNamed(t, w4, DefaultFormCookieName); c.Value == forged.Value {
		t.Error("FormToken kept a forged cookie")
	}
}
