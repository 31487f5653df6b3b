package web

import (
	"net/http"
	"testing"
	"time"
)

// TestHTTPDate: a dateCache's value is the second's date in the format RFC 9110
// prescribes, the same slice within a second, a new one in the next.
func TestHTTPDate(t *testing.T) {
	at := time.Date(2024, 5, 1, 12, 0, 7, 100, time.FixedZone("CEST", 2*3600))
	var c dateCache
	a := c.value(at)
	if len(a) != 1 || a[0] != "Wed, 01 May 2024 10:00:07 GMT" {
		t.Fatalf("value = %q", a)
	}
	if got, err := http.ParseTime(a[0]); err != nil || !got.Equal(at.Truncate(time.Second)) {
		t.Fatalf("ParseTime(%q) = %v, %v", a[0], got, err)
	}
	if b := c.value(at.Add(800 * time.Millisecond)); &b[0] != &a[0] {
		t.Error("a second formatted twice")
	}
	if c := c.value(at.Add(time.Second)); c[0] != "Wed, 01 May 2024 10:00:08 GMT" {
		t.Errorf("next second: %q", c)
	}
}
