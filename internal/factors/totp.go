package factors

import (
	"crypto/subtle"
	"encoding/base32"
	"fmt"
	"strings"
	"time"

	"github.com/pquerna/otp"
	"github.com/pquerna/otp/totp"
)

// TOTP parameters (RFC 6238): SHA-1, six digits, 30-second steps, and one
// step of clock drift allowed either way.
const (
	Period = 30
	Digits = 6
	Skew   = 1
)

// NewTOTPKey makes a fresh TOTP secret for user, with issuer shown by the
// authenticator app. The key's URL is the otpauth:// URI to enrol with,
// its Secret the base32 text to seal.
func NewTOTPKey(issuer, user string) (*otp.Key, error) {
	k, err := totp.Generate(totp.GenerateOpts{
		Issuer: issuer, AccountName: user,
		Period: Period, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1,
		SecretSize: 20,
	})
	if err != nil {
		return nil, fmt.Errorf("factors: making a TOTP secret: %w", err)
	}
	return k, nil
}

// TOTPURI returns the otpauth:// URI of an existing secret (base32), the
// same NewTOTPKey gives for it.
func TOTPURI(issuer, user, secret string) (string, error) {
	raw, err := base32.StdEncoding.WithPadding(base32.NoPadding).DecodeString(strings.ToUpper(secret))
	if err != nil {
		return "", fmt.Errorf("factors: the TOTP secret is not base32")
	}
	k, err := totp.Generate(totp.GenerateOpts{
		Issuer: issuer, AccountName: user, Secret: raw,
		Period: Period, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1,
	})
	if err != nil {
		return "", fmt.Errorf("factors: %w", err)
	}
	return k.URL(), nil
}

// CheckTOTP reports whether code is the TOTP code of secret at now or one
// step either side, and which step it matched (the counter, for refusing
// its replay). Every candidate step is computed and compared in constant
// time, so the answer's timing tells nothing.
func CheckTOTP(secret, code string, now time.Time) (step int64, ok bool) {
	if len(code) != Digits {
		return 0, false
	}
	for _, c := range code {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	opts := totp.ValidateOpts{Period: Period, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1}
	cur := now.Unix() / Period
	matched := int64(-1)
	for d := int64(-Skew); d <= Skew; d++ {
		t := time.Unix((cur+d)*Period, 0)
		want, err := totp.GenerateCodeCustom(secret, t, opts)
		if err != nil {
			return 0, false
		}
		if subtle.ConstantTimeCompare([]byte(want), []byte(code)) == 1 && matched < 0 {
			matched = cur + d
		}
	}
	return matched, matched >= 0
}

// TOTPCode returns the code of secret at t (for tests and tools).
func TOTPCode(secret string, t time.Time) (string, error) {
	return totp.GenerateCodeCustom(secret, t, totp.ValidateOpts{Period: Period, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1})
}

// ReplayTTL is how long a used TOTP step must be remembered: past it, the
// step is outside the window of every clock.
const ReplayTTL = (2*Skew + 2) * Period * time.Second
