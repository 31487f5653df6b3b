package session

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"time"
)

// Errors of Open. Callers branch on them (both usually mean "start over",
// e.g. a 400 on the OAuth callback); their text never includes the value.
var (
	ErrSealInvalid = errors.New("session: sealed value is invalid")
	ErrSealExpired = errors.New("session: sealed value has expired")
)

// MaxSealedLen is the longest sealed string Open accepts and Seal produces,
// in bytes: what fits in one cookie with room for its name and attributes.
const MaxSealedLen = 3800

// sealVersion is the first byte of every sealed value; it is also
// authenticated, so a future format cannot be confused with this one.
const sealVersion = 1

// Layout of a sealed value before base64url: version (1) || nonce (12) ||
// AES-256-GCM(expiry as Unix nanoseconds (8) || plaintext) with its 16-byte
// tag.
const (
	sealNonceLen = 12
	sealTagLen   = 16
	sealHeadLen  = 1 + sealNonceLen
	sealMinLen   = sealHeadLen + 8 + sealTagLen
)

// Seal encrypts and authenticates plaintext, with an expiry ttl from now, for
// state that must round-trip through the browser: the OAuth flow's state,
// PKCE verifier and nonce, for instance. The key is AES-256-GCM's, derived
// for purpose, so a value sealed for one purpose never opens under another.
// purpose must be a fixed label of the program ("oauth-flow"), not request
// data: a key is derived and kept for each purpose. The result is base64url,
// cookie- and URL-safe, at most MaxSealedLen long.
//
// Sealing hides and protects the value; it does not make it single-use. A
// caller that needs single use (OAuth state) must also clear the cookie or
// remember what was consumed.
func (m *Manager) Seal(purpose string, plaintext []byte, ttl time.Duration) (string, error) {
	if ttl <= 0 {
		return "", errors.New("session: seal: ttl must be positive")
	}
	if b64.EncodedLen(sealMinLen+len(plaintext)) > MaxSealedLen {
		return "", fmt.Errorf("session: seal: value too large (%d bytes)", len(plaintext))
	}
	aead, err := m.sealAEAD(purpose)
	if err != nil {
		return "", err
	}
	raw := make([]byte, sealHeadLen, sealMinLen+len(plaintext))
	raw[0] = sealVersion
	rand.Read(raw[1:sealHeadLen])
	body := make([]byte, 8, 8+len(plaintext))
	binary.BigEndian.PutUint64(body, uint64(m.now().Add(ttl).UnixNano()))
	body = append(body, plaintext...)
	raw = aead.Seal(raw, raw[1:sealHeadLen], body, raw[:1])
	return b64.EncodeToString(raw), nil
}

// Open returns the plaintext of a value Seal produced for the same purpose,
// under the current or the previous secret key. It returns ErrSealExpired
// once the ttl has passed and ErrSealInvalid for anything else (tampering,
// another purpose or key, truncation, garbage).
func (m *Manager) Open(purpose string, sealed string) ([]byte, error) {
	plain, err := m.keyset.open(m, purpose, sealed)
	if errors.Is(err, ErrSealInvalid) && m.prev != nil {
		return m.prev.open(m, purpose, sealed)
	}
	return plain, err
}

// open is Open under ks's key alone.
func (ks *keyset) open(m *Manager, purpose string, sealed string) ([]byte, error) {
	aead, err := ks.sealAEAD(purpose)
	if err != nil {
		return nil, err
	}
	if len(sealed) > MaxSealedLen {
		return nil, ErrSealInvalid
	}
	raw, err := b64.DecodeString(sealed)
	if err != nil || len(raw) < sealMinLen || raw[0] != sealVersion {
		return nil, ErrSealInvalid
	}
	body, err := aead.Open(nil, raw[1:sealHeadLen], raw[sealHeadLen:], raw[:1])
	if err != nil {
		return nil, ErrSealInvalid
	}
	expiry := time.Unix(0, int64(binary.BigEndian.Uint64(body[:8])))
	if !m.now().Before(expiry) {
		return nil, ErrSealExpired
	}
	return body[8:], nil
}

// sealAEAD returns the AES-256-GCM instance for purpose, deriving its key
// (HKDF label "backupweb/session/v1 seal <purpose>") on first use.
func (ks *keyset) sealAEAD(purpose string) (cipher.AEAD, error) {
	if purpose == "" {
		return nil, errors.New("session: seal: empty purpose")
	}
	if a, ok := ks.aeads.Load(purpose); ok {
		return a.(cipher.AEAD), nil
	}
	key, err := ks.keys.derive(labelSealPrefix + purpose)
	if err != nil {
		return nil, err
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("session: seal: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("session: seal: %w", err)
	}
	a, _ := ks.aeads.LoadOrStore(purpose, aead)
	return a.(cipher.AEAD), nil
}
