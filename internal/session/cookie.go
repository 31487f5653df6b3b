package session

import (
	"encoding/base64"
	"net/http"
	"strings"
	"time"
)

// b64 encodes every value this package puts in a cookie or token:
// unpadded base64url, which needs no quoting in a Cookie header. Strict
// decoding refuses non-canonical spellings, so one value has one encoding.
var b64 = base64.RawURLEncoding.Strict()

// encodedIDLen is the length of an encoded session id.
var encodedIDLen = b64.EncodedLen(idLen)

// encodeID returns the cookie value for a session id: base64url of its 32
// random bytes. There is no MAC beside it: a forged id costs one HMAC and a
// store miss, the same as a random guess, and 256 bits are not guessable.
func encodeID(id []byte) string {
	return b64.EncodeToString(id)
}

// decodeID parses a cookie value into a session id into dst.
func decodeID(dst *[idLen]byte, v string) bool {
	var src [64]byte
	return decodeIDWith(dst, src[:], v)
}

// decodeIDWith is decodeID with src (at least encodedIDLen bytes) as
// scratch.
func decodeIDWith(dst *[idLen]byte, src []byte, v string) bool {
	if len(v) != encodedIDLen || len(src) < encodedIDLen {
		return false
	}
	n, err := b64.Decode(dst[:], src[:copy(src, v)])
	return err == nil && n == idLen
}

// storeKey is the key under which the session with this id is stored:
// base64url(HMAC-SHA256(store key, id)). The store never sees the id.
func (m *Manager) storeKey(id []byte) string {
	s := m.storeMAC.get()
	key := s.storeKey(id)
	m.storeMAC.put(s)
	return key
}

// storeKey is Manager.storeKey in s: the MAC in s's array, its encoding in
// s's scratch, one allocation (the string).
func (s *macState) storeKey(id []byte) string {
	sum := s.compute("", id)
	enc := s.scratch[:b64.EncodedLen(len(sum))]
	b64.Encode(enc, sum)
	return string(enc)
}

// keyFromRequest returns the store key named by r's session cookie. It
// scans the Cookie header for the one name instead of parsing every
// cookie: this runs on every request of a session type.
func (m *Manager) keyFromRequest(r *http.Request) (string, bool) {
	v, ok := cookieValue(r, m.WireName(r, m.cookie))
	if !ok {
		return "", false
	}
	// The id, its MAC and their encodings live in the pooled state: the
	// key's string is the one allocation.
	s := m.storeMAC.get()
	key, ok := "", decodeIDWith(&s.id, s.scratch[:], v)
	if ok {
		key = s.storeKey(s.id[:])
	}
	clear(s.id[:]) // the id is a bearer secret: not kept in the pool
	clear(s.scratch[:])
	m.storeMAC.put(s)
	return key, ok
}

// cookieValue returns the value of the first cookie called name in r's
// Cookie headers, as http.Request.Cookie would, without allocating.
func cookieValue(r *http.Request, name string) (string, bool) {
	for _, line := range r.Header["Cookie"] {
		for len(line) > 0 {
			var part string
			part, line, _ = strings.Cut(line, ";")
			part = strings.TrimSpace(part)
			k, v, ok := strings.Cut(part, "=")
			if ok && k == name {
				if len(v) > 1 && v[0] == '"' && v[len(v)-1] == '"' {
					v = v[1 : len(v)-1]
				}
				return v, true
			}
		}
	}
	return "", false
}

// SetCookie sets a cookie with the flags every cookie of this service
// carries: HttpOnly, SameSite=Lax, Path=/, and Secure when the request came
// over https. maxAge > 0 makes it expire after that long (rounded down to
// seconds, at least one); 0 makes it last until the browser closes. It is
// meant for short-lived state such as an OAuth flow's sealed state cookie.
// value must be cookie-safe (Seal's output is).
func (m *Manager) SetCookie(w http.ResponseWriter, r *http.Request, name, value string, maxAge time.Duration) {
	c := m.baseCookie(r, name)
	c.Value = value
	if maxAge > 0 {
		c.MaxAge = max(1, int(maxAge/time.Second))
	}
	http.SetCookie(w, c)
}

// ClearCookie tells the browser to drop the cookie name (Max-Age=0 and an
// Expires in 1970 for old clients), with the same flags SetCookie uses so
// that the browser matches it.
func (m *Manager) ClearCookie(w http.ResponseWriter, r *http.Request, name string) {
	c := m.baseCookie(r, name)
	c.MaxAge = -1
	c.Expires = time.Unix(1, 0).UTC()
	http.SetCookie(w, c)
}

// HostPrefix starts the name of every cookie of this service set over
// https (RFC 6265bis): a browser accepts such a cookie only with Secure,
// Path=/ and no Domain, so a sibling subdomain (evil.example.com) can
// neither set nor overwrite it. Over plain http (local use) cookies keep
// their plain names, since browsers refuse the prefix there.
const HostPrefix = "__Host-"

// WireName returns the name the cookie name has on the wire for r: with
// HostPrefix over https, as is otherwise.
func (m *Manager) WireName(r *http.Request, name string) string {
	switch {
	case !m.secure(r):
		return name
	case m.domain != "":
		return SecurePrefix + name
	default:
		return HostPrefix + name
	}
}

// SecurePrefix replaces HostPrefix when the cookies name a domain
// (Options.CookieDomain): browsers then accept them only with Secure.
const SecurePrefix = "__Secure-"

// Cookie returns r's cookie name as SetCookie set it for such a request
// (see WireName). Over https a cookie without the prefix is not accepted:
// a sibling subdomain could have set it.
func (m *Manager) Cookie(r *http.Request, name string) (*http.Cookie, error) {
	return r.Cookie(m.WireName(r, name))
}

func (m *Manager) baseCookie(r *http.Request, name string) *http.Cookie {
	c := &http.Cookie{
		Name:     m.WireName(r, name),
		Path:     "/",
		HttpOnly: true,
		SameSite: http.SameSiteLaxMode,
		Secure:   m.secure(r),
	}
	if c.Secure && m.domain != "" {
		c.Domain = m.domain
	}
	return c
}

// validCookieName reports whether name can be a cookie name.
func validCookieName(name string) bool {
	return (&http.Cookie{Name: name, Value: "x"}).Valid() == nil
}

// prevKeyFromRequest is keyFromRequest under the previous secret key:
// where a session made before the rotation is kept. ok is false without a
// previous key or a well-formed cookie.
func (m *Manager) prevKeyFromRequest(r *http.Request) (string, bool) {
	if m.prev == nil {
		return "", false
	}
	v, ok := cookieValue(r, m.WireName(r, m.cookie))
	if !ok {
		return "", false
	}
	s := m.prev.storeMAC.get()
	key, ok := "", decodeIDWith(&s.id, s.scratch[:], v)
	if ok {
		key = s.storeKey(s.id[:])
	}
	clear(s.id[:])
	clear(s.scratch[:])
	m.prev.storeMAC.put(s)
	return key, ok
}

// keysFromRequest returns every store key r's session cookie may name: the
// current key's and, with a previous key, the previous key's. Empty
// without a well-formed cookie.
func (m *Manager) keysFromRequest(r *http.Request) []string {
	key, ok := m.keyFromRequest(r)
	if !ok {
		return nil
	}
	keys := []string{key}
	if prev, ok := m.prevKeyFromRequest(r); ok {
		keys = append(keys, prev)
	}
	return keys
}
