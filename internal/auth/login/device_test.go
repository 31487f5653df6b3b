package login

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestDeviceCookieShape: over https the device cookie carries the __Host-
// prefix and the flags of the other cookies; it is valid for its own user
// name only, until it expires, and not once tampered with.
func TestDeviceCookieShape(t *testing.T) {
	h := newHarness(t, nil)
	rec := httptest.NewRecorder()
	h.p.issueDevice(rec, httptest.NewRequest("POST", "https://backups.example.com/login", nil), "alice")
	cookies := rec.Result().Cookies()
	if len(cookies) != 1 {
		t.Fatalf("cookies set: %v", cookies)
	}
	c := cookies[0]
	if c.Name != "__Host-"+DeviceCookie || !c.Secure || !c.HttpOnly || c.Path != "/" || c.Domain != "" ||
		c.SameSite != http.SameSiteLaxMode || c.MaxAge != int(DeviceLifetime/time.Second) {
		t.Fatalf("device cookie over https: %+v", c)
	}
	with := func(value string) *http.Request {
		r := httptest.NewRequest("POST", "https://backups.example.com/login", nil)
		r.AddCookie(&http.Cookie{Name: c.Name, Value: value})
		return r
	}
	id, ok := h.p.device(with(c.Value), "alice")
	if !ok || id == "" || strings.Contains(c.Value, "alice") {
		t.Fatalf("the cookie is not valid for alice (%q, %v), or names her", id, ok)
	}
	if _, ok := h.p.device(with(c.Value), "bob"); ok {
		t.Fatal("alice's device cookie is valid for bob")
	}
	tampered := []byte(c.Value)
	tampered[0] ^= 1
	if _, ok := h.p.device(with(string(tampered)), "alice"); ok {
		t.Fatal("a tampered device cookie is valid")
	}
	plain := httptest.NewRequest("POST", "https://backups.example.com/login", nil)
	plain.AddCookie(&http.Cookie{Name: DeviceCookie, Value: c.Value})
	if _, ok := h.p.device(plain, "alice"); ok {
		t.Fatal("over https a device cookie without the __Host- prefix is accepted")
	}
	h.clock.Advance(DeviceLifetime)
	if _, ok := h.p.device(with(c.Value), "alice"); ok {
		t.Fatal("an expired device cookie is valid")
	}
}

// TestDeviceCookiePreviousKey: during a secret key rotation a device
// cookie signed under the previous key stays valid; one signed under a
// key the provider does not hold is not.
func TestDeviceCookiePreviousKey(t *testing.T) {
	h := newHarness(t, nil)
	rec := httptest.NewRecorder()
	h.p.issueDevice(rec, httptest.NewRequest("POST", "http://backups.example.com/login", nil), "alice")
	c := rec.Result().Cookies()[0]
	r := httptest.NewRequest("POST", "http://backups.example.com/login", nil)
	r.AddCookie(c)
	old := h.p.deviceKey
	for _, tc := range []struct {
		name     string
		cur, pre []byte
		ok       bool
	}{
		{"signed under the previous key", []byte(strings.Repeat("n", 32)), old, true},
		{"signed under neither key", []byte(strings.Repeat("n", 32)), []byte(strings.Repeat("p", 32)), false},
		{"no previous key", []byte(strings.Repeat("n", 32)), nil, false},
	} {
		h.p.deviceKey, h.p.devicePrevKey = tc.cur, tc.pre
		if _, ok := h.p.device(r, "alice"); ok != tc.ok {
			t.Errorf("%s: valid %v, want %v", tc.name, ok, tc.ok)
		}
	}
}
