package session

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"strings"
	"testing"
)

func TestDeriveKeysDifferPerPurpose(t *testing.T) {
	kr, err := newKeyring(testKey)
	if err != nil {
		t.Fatal(err)
	}
	labels := []string{labelStoreKey, labelCSRF, labelFormCookie, labelSealPrefix + "oauth", labelSealPrefix + "other"}
	seen := map[string]string{}
	for _, l := range labels {
		k, err := kr.derive(l)
		if err != nil {
			t.Fatalf("derive(%q): %v", l, err)
		}
		if len(k) != derivedKeyLen {
			t.Errorf("derive(%q): %d bytes, want %d", l, len(k), derivedKeyLen)
		}
		if bytes.Contains(k, testKey[:16]) || bytes.Equal(k, testKey) {
			t.Errorf("derive(%q) reuses the raw key", l)
		}
		if other, dup := seen[string(k)]; dup {
			t.Errorf("labels %q and %q derive the same key", other, l)
		}
		seen[string(k)] = l
	}

	// Deterministic for one secret, different for another.
	again, _ := newKeyring(testKey)
	a, _ := kr.derive(labelCSRF)
	b, _ := again.derive(labelCSRF)
	if !bytes.Equal(a, b) {
		t.Error("same secret and label gave different keys")
	}
	otherSecret, _ := newKeyring([]byte(strings.Repeat("z", 32)))
	c, _ := otherSecret.derive(labelCSRF)
	if bytes.Equal(a, c) {
		t.Error("different secrets gave the same key")
	}
}

func TestMACPoolMatchesHMAC(t *testing.T) {
	key := []byte("k")
	mp := newMACPool(key)
	tests := []struct {
		prefix string
		msg    string
	}{
		{"", "message"},
		{"form\x00", "nonce"},
		{"session\x00", ""},
	}
	for _, tt := range tests {
		h := hmac.New(sha256.New, key)
		h.Write([]byte(tt.prefix + tt.msg))
		want := h.Sum(nil)
		for range 2 { // second round uses a pooled, reset state
			if got := mp.sum(nil, tt.prefix, []byte(tt.msg)); !bytes.Equal(got, want) {
				t.Errorf("sum(%q, %q) = %x, want %x", tt.prefix, tt.msg, got, want)
			}
		}
	}
}

func TestNewManagerOptions(t *testing.T) {
	clock := newClock()
	store := NewMemoryStore(clock.Now)
	tests := []struct {
		name    string
		o       Options
		wantErr string
	}{
		{"ok", Options{Store: store, Key: testKey}, ""},
		{"no store", Options{Key: testKey}, "no store"},
		{"no key", Options{Store: store}, "at least 32 bytes"},
		{"short key", Options{Store: store, Key: testKey[:31]}, "gen-secret"},
		{"negative idle", Options{Store: store, Key: testKey, IdleTimeout: -1}, "negative"},
		{"negative lifetime", Options{Store: store, Key: testKey, Lifetime: -1}, "negative"},
		{"bad cookie name", Options{Store: store, Key: testKey, CookieName: "a b"}, "invalid cookie name"},
		{"same cookie names", Options{Store: store, Key: testKey, CookieName: "x", FormCookieName: "x"}, "different names"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := NewManager(tt.o)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("NewManager: %v", err)
				}
				if m.CookieName() != DefaultCookieName || m.FormCookieName() != DefaultFormCookieName {
					t.Errorf("cookie names %q, %q; want defaults", m.CookieName(), m.FormCookieName())
				}
				if m.idle != DefaultIdleTimeout || m.lifetime != DefaultLifetime || m.touch != maxTouchInterval {
					t.Errorf("durations %v, %v, %v; want defaults", m.idle, m.lifetime, m.touch)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.HasPrefix(err.Error(), "session: ") {
				t.Fatalf("NewManager error = %v, want one containing %q", err, tt.wantErr)
			}
			if strings.Contains(err.Error(), string(testKey[:31])) {
				t.Error("error echoes the key")
			}
		})
	}
}
