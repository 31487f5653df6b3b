package session

import (
	"crypto/hmac"
	"crypto/rand"
	"net/http"
)

// CSRF scheme.
//
// A session's token is HMAC-SHA256(csrf key, "session\x00" || per-session
// secret); the login form's token, before any session exists, is
// HMAC-SHA256(csrf key, "form\x00" || nonce) where the nonce lives in the
// form cookie. The csrf key is derived from the secret key, so a leaked
// session store (which holds the per-session secrets) does not yield tokens.
//
// Tokens are masked for every render, against BREACH-style compression
// attacks on HTTPS responses: the token sent is base64url(pad || pad XOR
// token) with a fresh random 32-byte pad, so it differs on every page while
// always verifying. Verification unmasks and compares in constant time.

// tokenLen is the size of an unmasked token (an HMAC-SHA256 output).
const tokenLen = 32

// Domain-separation prefixes for the two kinds of token under the csrf key.
const (
	csrfPrefixSession = "session\x00"
	csrfPrefixForm    = "form\x00"
)

var (
	maskedTokenLen = b64.EncodedLen(2 * tokenLen)
	formCookieLen  = b64.EncodedLen(2 * tokenLen)
)

// CSRFToken returns the token that forms (field csrf_token) and scripts
// (header X-CSRF-Token) must send back with unsafe requests made under s. It
// is masked afresh on every call; every value it returns for s stays valid
// for the life of s. A nil session gets "", which no check accepts. The
// token is made under the key s's record verified under, so that during a
// rotation an instance that holds only that key accepts it too.
func (m *Manager) CSRFToken(s *Session) string {
	if s == nil || len(s.csrf) == 0 {
		return ""
	}
	ks := m.keyset
	if s.ks != nil {
		ks = s.ks
	}
	return maskToken(ks.csrfMAC.sum(nil, csrfPrefixSession, s.csrf))
}

// CSRFToken is Manager.CSRFToken of s by the manager that made or
// loaded s: a *Session is the auth.CSRFSource of its user, handed over
// without an allocation.
func (s *Session) CSRFToken() string {
	if s == nil || s.m == nil {
		return ""
	}
	return s.m.CSRFToken(s)
}

// csrfMatches reports whether tok is the CSRF token of msg (with its
// prefix) under the current or the previous key.
func (m *Manager) csrfMatches(tok []byte, prefix string, msg []byte) bool {
	if hmac.Equal(tok, m.csrfMAC.sum(nil, prefix, msg)) {
		return true
	}
	return m.prev != nil && hmac.Equal(tok, m.prev.csrfMAC.sum(nil, prefix, msg))
}

// ValidCSRF reports whether token is a token CSRFToken issued for s. Tokens
// of other sessions, of the login form, and malformed values are refused.
func (m *Manager) ValidCSRF(s *Session, token string) bool {
	if s == nil || len(s.csrf) == 0 {
		return false
	}
	var got [tokenLen]byte
	if !unmaskToken(&got, token) {
		return false
	}
	return m.csrfMatches(got[:], csrfPrefixSession, s.csrf)
}

// FormToken returns a CSRF token for a form shown before any session exists
// (the login form). The token is bound to a random nonce held in the form
// cookie (FormCookieName: HttpOnly, SameSite=Lax, Path=/, Secure under the
// same rule as the session cookie, lasting until the browser closes). A
// cookie already present and correctly signed is reused, so several open tabs
// keep working; otherwise a new one is set on w.
//
// What it defends against: a third-party site posting the login form without
// having read it. It cannot bind the form to a user who does not exist yet,
// so it does not stop an attacker who controls a sibling domain from planting
// his own cookie and token (cookie tossing); serving the site on its own
// registrable domain does.
func (m *Manager) FormToken(w http.ResponseWriter, r *http.Request) string {
	nonce, ks, ok := m.formNonce(r)
	if !ok {
		nonce = make([]byte, tokenLen)
		rand.Read(nonce)
		v := make([]byte, 0, 2*tokenLen)
		v = append(v, nonce...)
		v = m.formMAC.sum(v, "", nonce)
		m.SetCookie(w, r, m.formCookie, b64.EncodeToString(v), 0)
		ks = m.keyset
	}
	// Under the cookie's own key, as CSRFToken does for a session.
	return maskToken(ks.csrfMAC.sum(nil, csrfPrefixForm, nonce))
}

// CheckFormToken reports whether token is a FormToken bound to the form
// cookie r carries. A missing or forged cookie, a malformed token, or a token
// bound to another cookie is refused.
func (m *Manager) CheckFormToken(r *http.Request, token string) bool {
	nonce, _, ok := m.formNonce(r)
	if !ok {
		return false
	}
	var got [tokenLen]byte
	if !unmaskToken(&got, token) {
		return false
	}
	return m.csrfMatches(got[:], csrfPrefixForm, nonce)
}

// formNonce returns the nonce of r's form cookie if its signature holds
// under the current or the previous key, and the keyset it holds under.
func (m *Manager) formNonce(r *http.Request) ([]byte, *keyset, bool) {
	c, err := m.Cookie(r, m.formCookie)
	if err != nil || len(c.Value) != formCookieLen {
		return nil, nil, false
	}
	var buf [2 * tokenLen]byte
	if n, err := b64.Decode(buf[:], []byte(c.Value)); err != nil || n != len(buf) {
		return nil, nil, false
	}
	nonce, sig := buf[:tokenLen], buf[tokenLen:]
	for _, ks := range []*keyset{m.keyset, m.prev} {
		if ks != nil && hmac.Equal(sig, ks.formMAC.sum(nil, "", nonce)) {
			return nonce, ks, true
		}
	}
	return nil, nil, false
}

// maskToken returns base64url(pad || pad XOR tok) with a fresh random pad.
func maskToken(tok []byte) string {
	var buf [2 * tokenLen]byte
	rand.Read(buf[:tokenLen])
	for i := range tokenLen {
		buf[tokenLen+i] = buf[i] ^ tok[i]
	}
	return b64.EncodeToString(buf[:])
}

// unmaskToken reverses maskToken into dst; false for a malformed value.
func unmaskToken(dst *[tokenLen]byte, s string) bool {
	if len(s) != maskedTokenLen {
		return false
	}
	var buf [2 * tokenLen]byte
	if n, err := b64.Decode(buf[:], []byte(s)); err != nil || n != len(buf) {
		return false
	}
	for i := range tokenLen {
		dst[i] = buf[i] ^ buf[tokenLen+i]
	}
	return true
}
