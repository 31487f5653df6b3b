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
