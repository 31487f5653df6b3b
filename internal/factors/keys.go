package factors

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
)

// HKDF labels of the keys derived from the secret key, each used for one
// purpose only and independent of the session package's keys.
const (
	labelTOTP     = "backupweb/factors/v1 totp-secret"
	labelRecovery = "backupweb/factors/v1 recovery-code"
)

// sealPrefix starts every sealed TOTP secret: the scheme's version.
const sealPrefix = "v1."

// MinSecretLen is the shortest secret key NewKeys accepts, in bytes (the
// contract's rule for BACKUP_SECRET_KEY).
const MinSecretLen = 32

// ErrDecrypt is returned when a sealed secret does not decrypt: it was
// sealed under another secret key, for another user, or altered.
var ErrDecrypt = errors.New("the TOTP secret does not decrypt with this secret key (another BACKUP_SECRET_KEY, another user's line, or an altered value)")

// Keys encrypts TOTP secrets and hashes recovery codes under keys derived
// from the secret key (HKDF-SHA256, one label each). It is safe for
// concurrent use.
type Keys struct {
	aead     cipher.AEAD
	recovery []byte
	// prev holds the previous secret key's (BACKUP_SECRET_KEY_PREVIOUS),
	// accepted for reading only; nil without one (see NewKeyring).
	prev *Keys
}

// NewKeys derives the keys from secret (BACKUP_SECRET_KEY).
func NewKeys(secret []byte) (*Keys, error) {
	if len(secret) < MinSecretLen {
		return nil, fmt.Errorf("factors: the secret key is %d bytes, at least %d are needed", len(secret), MinSecretLen)
	}
	enc, err := hkdf.Key(sha256.New, secret, nil, labelTOTP, 32)
	if err != nil {
		return nil, fmt.Errorf("factors: deriving keys: %w", err)
	}
	rec, err := hkdf.Key(sha256.New, secret, nil, labelRecovery, 32)
	if err != nil {
		return nil, fmt.Errorf("factors: deriving keys: %w", err)
	}
	block, err := aes.NewCipher(enc)
	if err != nil {
		return nil, fmt.Errorf("factors: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("factors: %w", err)
	}
	return &Keys{aead: aead, recovery: rec}, nil
}

// SealTOTP encrypts a TOTP secret (its base32 text) for user: AES-256-GCM
// with a random nonce, the user name as associated data, so that a sealed
// secret moved to another user's line does not decrypt.
func (k *Keys) SealTOTP(user, secret string) string {
	nonce := make([]byte, k.aead.NonceSize())
	rand.Read(nonce)
	ct := k.aead.Seal(nonce, nonce, []byte(secret), []byte("totp\x00"+user))
	return sealPrefix + base64.RawURLEncoding.EncodeToString(ct)
}

// OpenTOTP decrypts what SealTOTP sealed for user. Errors never include
// the secret.
func (k *Keys) OpenTOTP(user, sealed string) (string, error) {
	rest, ok := strings.CutPrefix(sealed, sealPrefix)
	if !ok {
		return "", errors.New("the TOTP secret is not in a known format (expected v1.)")
	}
	raw, err := base64.RawURLEncoding.DecodeString(rest)
	if err != nil || len(raw) < k.aead.NonceSize()+k.aead.Overhead() {
		return "", errors.New("the TOTP secret is not valid base64url of a sealed value")
	}
	n := k.aead.NonceSize()
	pt, err := k.aead.Open(nil, raw[:n], raw[n:], []byte("totp\x00"+user))
	if err != nil && k.prev != nil {
		return k.prev.OpenTOTP(user, sealed)
	}
	if err != nil {
		return "", ErrDecrypt
	}
	return string(pt), nil
}

// RecoveryCount is how many recovery codes NewRecoveryCodes makes.
const RecoveryCount = 10

// recoveryBytes is the entropy of one recovery code: 80 bits, shown as 16
// base32 characters in four groups.
const recoveryBytes = 10

var recoveryEncoding = base32.StdEncoding.WithPadding(base32.NoPadding)

// NewRecoveryCodes returns RecoveryCount fresh recovery codes, as shown to
// the user ("ABCD-EFGH-IJKL-MNOP"), and their hashes, as stored.
func (k *Keys) NewRecoveryCodes(user string) (codes, hashes []string) {
	for range RecoveryCount {
		raw := make([]byte, recoveryBytes)
		rand.Read(raw)
		s := recoveryEncoding.EncodeToString(raw)
		code := s[0:4] + "-" + s[4:8] + "-" + s[8:12] + "-" + s[12:16]
		codes = append(codes, code)
		hashes = append(hashes, k.sealRecovery(user, code))
	}
	return codes, hashes
}

// NormalizeRecovery puts a typed recovery code in the form it is hashed
// in: upper case, without spaces or dashes. ok is false when it cannot be
// a recovery code at all.
func NormalizeRecovery(code string) (string, bool) {
	var b strings.Builder
	for _, r := range code {
		switch {
		case r == '-' || r == ' ':
		case r >= 'a' && r <= 'z':
			b.WriteRune(r - 'a' + 'A')
		case r >= 'A' && r <= 'Z' || r >= '2' && r <= '7':
			b.WriteRune(r)
		default:
			return "", false
		}
	}
	s := b.String()
	return s, len(s) == 16
}

// HashRecovery returns the stored form of a recovery code of user:
// HMAC-SHA256 under the recovery key, over the user name and the
// normalised code. A stolen factors file alone gives nothing to guess
// against; the codes' 80 bits make guessing hopeless anyway.
func (k *Keys) HashRecovery(user, code string) string {
	norm, _ := NormalizeRecovery(code)
	m := hmac.New(sha256.New, k.recovery)
	m.Write([]byte("recovery\x00" + user + "\x00" + norm))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// MatchRecovery returns the index in hashes of the hash of code, or -1:
// sealed hashes (see sealRecovery) and keyed ones (HashRecovery), under
// the current or the previous key. Every hash is compared, in constant
// time.
func (k *Keys) MatchRecovery(user, code string, hashes []string) int {
	if _, ok := NormalizeRecovery(code); !ok {
		return -1
	}
	digest := recoveryDigest(user, code)
	keyed := [][]byte{[]byte(k.HashRecovery(user, code))}
	if k.prev != nil {
		keyed = append(keyed, []byte(k.prev.HashRecovery(user, code)))
	}
	found := -1
	for i, h := range hashes {
		match := false
		if strings.HasPrefix(h, recoverySealPrefix) {
			d, _, err := k.openRecovery(user, h)
			match = err == nil && hmac.Equal(d, digest)
		} else {
			for _, w := range keyed {
				match = hmac.Equal([]byte(h), w) || match
			}
		}
		if match && found < 0 {
			found = i
		}
	}
	return found
}

// NewHandle returns a fresh WebAuthn user handle: 32 random bytes.
func NewHandle() []byte {
	h := make([]byte, 32)
	rand.Read(h)
	return h
}
