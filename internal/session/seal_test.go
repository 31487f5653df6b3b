package session

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestSealOpen(t *testing.T) {
	clock := newClock()
	m := newTestManager(t, clock, nil, Options{})
	other := newTestManager(t, clock, nil, Options{Key: []byte(strings.Repeat("k", 32))})
	plain := []byte(`{"state":"s","verifier":"v","nonce":"n","next":"/"}`)

	sealed, err := m.Seal("oauth-flow", plain, 10*time.Minute)
	if err != nil {
		t.Fatalf("Seal: %v", err)
	}
	if strings.Contains(sealed, "verifier") {
		t.Error("sealed value shows its plaintext")
	}
	again, _ := m.Seal("oauth-flow", plain, 10*time.Minute)
	if again == sealed {
		t.Error("two seals of one value are identical (nonce reuse)")
	}
	empty, err := m.Seal("oauth-flow", nil, time.Minute)
	if err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name    string
		m       *Manager
		purpose string
		sealed  string
		advance time.Duration
		want    []byte
		wantErr error
	}{
		{name: "round trip", m: m, purpose: "oauth-flow", sealed: sealed, want: plain},
		{name: "empty plaintext", m: m, purpose: "oauth-flow", sealed: empty, want: []byte{}},
		{name: "just before expiry", m: m, purpose: "oauth-flow", sealed: sealed, advance: 10*time.Minute - time.Nanosecond, want: plain},
		{name: "expired", m: m, purpose: "oauth-flow", sealed: sealed, advance: 10 * time.Minute, wantErr: ErrSealExpired},
		{name: "wrong purpose", m: m, purpose: "other", sealed: sealed, wantErr: ErrSealInvalid},
		{name: "other secret key", m: other, purpose: "oauth-flow", sealed: sealed, wantErr: ErrSealInvalid},
		{name: "tampered version", m: m, purpose: "oauth-flow", sealed: flip(sealed, 0), wantErr: ErrSealInvalid},
		{name: "tampered nonce", m: m, purpose: "oauth-flow", sealed: flip(sealed, 5), wantErr: ErrSealInvalid},
		{name: "tampered body", m: m, purpose: "oauth-flow", sealed: flip(sealed, 30), wantErr: ErrSealInvalid},
		{name: "tampered tag", m: m, purpose: "oauth-flow", sealed: flip(sealed, len(sealed)-3), wantErr: ErrSealInvalid},
		{name: "truncated", m: m, purpose: "oauth-flow", sealed: sealed[:len(sealed)-4], wantErr: ErrSealInvalid},
		{name: "too short", m: m, purpose: "oauth-flow", sealed: "AQ", wantErr: ErrSealInvalid},
		{name: "not base64url", m: m, purpose: "oauth-flow", sealed: "!!!", wantErr: ErrSealInvalid},
		{name: "empty", m: m, purpose: "oauth-flow", sealed: "", wantErr: ErrSealInvalid},
		{name: "oversized", m: m, purpose: "oauth-flow", sealed: strings.Repeat("A", MaxSealedLen+1), wantErr: ErrSealInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock.Set(epoch.Add(tt.advance))
			got, err := tt.m.Open(tt.purpose, tt.sealed)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) || got != nil {
					t.Fatalf("Open = %q, %v; want %v", got, err, tt.wantErr)
				}
				return
			}
			if err != nil || !bytes.Equal(got, tt.want) {
				t.Fatalf("Open = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestSealRefuses(t *testing.T) {
	m := newTestManager(t, newClock(), nil, Options{})
	tests := []struct {
		name    string
		purpose string
		plain   []byte
		ttl     time.Duration
	}{
		{"empty purpose", "", []byte("x"), time.Minute},
		{"zero ttl", "p", []byte("x"), 0},
		{"negative ttl", "p", []byte("x"), -time.Second},
		{"too large", "p", make([]byte, MaxSealedLen), time.Minute},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if out, err := m.Seal(tt.purpose, tt.plain, tt.ttl); err == nil || out != "" || !strings.HasPrefix(err.Error(), "session: ") {
				t.Errorf("Seal = %q, %v; want an error", out, err)
			}
		})
	}
	if _, err := m.Open("", "x"); err == nil {
		t.Error("Open accepted an empty purpose")
	}
	// The largest accepted plaintext still fits MaxSealedLen.
	n := b64.DecodedLen(MaxSealedLen) - sealMinLen
	out, err := m.Seal("p", make([]byte, n), time.Minute)
	if err != nil || len(out) > MaxSealedLen {
		t.Errorf("Seal of %d bytes: len %d, %v", n, len(out), err)
	}
}
