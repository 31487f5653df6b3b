package factors

import (
	"testing"
	"time"
)

// rfcSecret is RFC 6238's SHA-1 test secret "12345678901234567890" in
// base32.
const rfcSecret = "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ"

func TestCheckTOTP(t *testing.T) {
	at := time.Unix(59, 0) // RFC 6238 appendix B: 94287082, six digits 287082
	cases := []struct {
		name string
		code string
		now  time.Time
		ok   bool
		step int64
	}{
		{"rfc vector", "287082", at, true, 1},
		{"one step late", "287082", at.Add(30 * time.Second), true, 1},
		{"one step early", "287082", at.Add(-30 * time.Second), true, 1},
		{"two steps late", "287082", at.Add(60 * time.Second), false, 0},
		{"wrong", "287083", at, false, 0},
		{"short", "28708", at, false, 0},
		{"letters", "28708a", at, false, 0},
		{"eight digits", "94287082", at, false, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			step, ok := CheckTOTP(rfcSecret, c.code, c.now)
			if ok != c.ok || ok && step != c.step {
				t.Errorf("CheckTOTP = %d, %v; want %d, %v", step, ok, c.step, c.ok)
			}
		})
	}
	k, err := NewTOTPKey("backupweb", "alice")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	code, _ := TOTPCode(k.Secret(), now)
	if _, ok := CheckTOTP(k.Secret(), code, now); !ok {
		t.Error("a fresh key's own code is refused")
	}
	if k.Period() != 30 || k.Digits().Length() != 6 || k.Algorithm().String() != "SHA1" {
		t.Errorf("key parameters %v %v %v", k.Period(), k.Digits(), k.Algorithm())
	}
}

// BenchmarkCheckTOTP is the work of checking one code: three HMAC-SHA1.
func BenchmarkCheckTOTP(b *testing.B) {
	now := time.Unix(59, 0)
	for b.Loop() {
		CheckTOTP(rfcSecret, "287082", now)
	}
}

// BenchmarkMatchRecovery is the work of checking one recovery code
// against ten: one HMAC-SHA256 and ten comparisons.
func BenchmarkMatchRecovery(b *testing.B) {
	k := testKeys(b)
	codes, hashes := k.NewRecoveryCodes("alice")
	for b.Loop() {
		k.MatchRecovery("alice", codes[9], hashes)
	}
}
