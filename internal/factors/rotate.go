package factors

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"github.com/backupweb/backupweb/internal/secretkey"
)

// NewKeyring derives the keys from k: everything is sealed under its
// current key, and what was sealed under its previous key (a rotation in
// progress) still opens. A value that opens under neither is ErrDecrypt.
func NewKeyring(k secretkey.Keys) (*Keys, error) {
	cur, err := NewKeys(k.Current)
	if err != nil {
		return nil, err
	}
	if k.HasPrevious() {
		if cur.prev, err = NewKeys(k.Previous); err != nil {
			return nil, fmt.Errorf("factors: the previous key: %w", err)
		}
	}
	return cur, nil
}

// Recovery codes are kept as their digest (SHA-256 over the user name and
// the normalised code) sealed under the TOTP key with the user name as
// associated data: a stolen factors file gives nothing to guess against,
// as with a keyed hash, and a rotation can open the digest under the
// previous key and seal it under the current one, which a keyed hash of a
// code nobody keeps would not allow.
const recoverySealPrefix = "s1."

// recoverySealedLen is the length of a sealed recovery hash: the prefix
// and base64url of nonce (12), digest (32) and tag (16).
var recoverySealedLen = len(recoverySealPrefix) + base64.RawURLEncoding.EncodedLen(12+sha256.Size+16)

// recoveryDigest is what a sealed recovery hash holds.
func recoveryDigest(user, code string) []byte {
	norm, _ := NormalizeRecovery(code)
	d := sha256.Sum256([]byte("backupweb/factors recovery\x00" + user + "\x00" + norm))
	return d[:]
}

// sealRecovery returns the stored form of a recovery code of user.
func (k *Keys) sealRecovery(user, code string) string {
	return k.sealDigest(user, recoveryDigest(user, code))
}

func (k *Keys) sealDigest(user string, digest []byte) string {
	nonce := make([]byte, k.aead.NonceSize())
	rand.Read(nonce)
	ct := k.aead.Seal(nonce, nonce, digest, []byte("recovery\x00"+user))
	return recoverySealPrefix + base64.RawURLEncoding.EncodeToString(ct)
}

// openRecovery returns the digest a sealed recovery hash holds and whether
// it opened under the previous key rather than the current one.
func (k *Keys) openRecovery(user, sealed string) (digest []byte, previous bool, err error) {
	raw, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(sealed, recoverySealPrefix))
	n := k.aead.NonceSize()
	if err != nil || len(raw) < n+k.aead.Overhead() {
		return nil, false, errors.New("a recovery code hash is not valid base64url of a sealed value")
	}
	d, err := k.aead.Open(nil, raw[:n], raw[n:], []byte("recovery\x00"+user))
	if err == nil {
		return d, false, nil
	}
	if k.prev != nil {
		if d, _, err := k.prev.openRecovery(user, sealed); err == nil {
			return d, true, nil
		}
	}
	return nil, false, errors.New("a recovery code hash does not open with this secret key (another BACKUP_SECRET_KEY, another user's line, or an altered value)")
}

// ResealCount counts what Reseal did with one user's record or a file.
type ResealCount struct {
	// TOTP secrets and recovery code hashes now under the current key
	// that were under the previous one, and those that were already.
	TOTPResealed, TOTPCurrent         int
	RecoveryResealed, RecoveryCurrent int
	// Refused open under neither key and are left as they are.
	TOTPRefused, RecoveryRefused int
	// RecoveryKeyed are keyed hashes (made before recovery codes were
	// sealed): they cannot be resealed without the code, and match while
	// the key they were made under is held.
	RecoveryKeyed int
	// Broken are lines of the file that do not parse, a TOTP secret
	// under neither key among them: kept as they are.
	Broken int
}

func (c *ResealCount) add(o ResealCount) {
	c.TOTPResealed += o.TOTPResealed
	c.TOTPCurrent += o.TOTPCurrent
	c.TOTPRefused += o.TOTPRefused
	c.RecoveryResealed += o.RecoveryResealed
	c.RecoveryCurrent += o.RecoveryCurrent
	c.RecoveryRefused += o.RecoveryRefused
	c.RecoveryKeyed += o.RecoveryKeyed
	c.Broken += o.Broken
}

// Counts returns c as the counts `backupweb rotate-secret` prints.
func (c ResealCount) Counts() []secretkey.Count {
	return []secretkey.Count{
		{Kind: "TOTP secrets", Resealed: c.TOTPResealed, Current: c.TOTPCurrent, Refused: c.TOTPRefused},
		{Kind: "recovery codes", Resealed: c.RecoveryResealed, Current: c.RecoveryCurrent, Refused: c.RecoveryRefused, Stuck: c.RecoveryKeyed},
		{Kind: "factors lines that do not parse", Refused: c.Broken},
	}
}

// Reseal puts rec's TOTP secret and recovery code hashes under the
// current key, in place. What opens under neither key is left as it is
// and counted; nothing is dropped. Passkeys hold no secret of the
// service and are not touched.
func (k *Keys) Reseal(rec *Record) ResealCount {
	var c ResealCount
	if rec.TOTP != nil {
		switch secret, err := k.OpenTOTP(rec.User, rec.TOTP.Sealed); {
		case err != nil:
			c.TOTPRefused++
		case k.openTOTPCurrent(rec.User, rec.TOTP.Sealed):
			c.TOTPCurrent++
		default:
			rec.TOTP.Sealed = k.SealTOTP(rec.User, secret)
			c.TOTPResealed++
		}
	}
	for i, h := range rec.Recovery {
		if !strings.HasPrefix(h, recoverySealPrefix) {
			c.RecoveryKeyed++
			continue
		}
		switch d, previous, err := k.openRecovery(rec.User, h); {
		case err != nil:
			c.RecoveryRefused++
		case previous:
			rec.Recovery[i] = k.sealDigest(rec.User, d)
			c.RecoveryResealed++
		default:
			c.RecoveryCurrent++
		}
	}
	return c
}

// openTOTPCurrent reports whether sealed opens under the current key.
func (k *Keys) openTOTPCurrent(user, sealed string) bool {
	cur := *k
	cur.prev = nil
	_, err := cur.OpenTOTP(user, sealed)
	return err == nil
}

// ResealFile puts every record of the factors file at path under the
// current key, under the file's lock (Edit), and returns the counts. A
// line that does not parse is kept as it is. Idempotent: a second run
// finds everything current and writes the file unchanged.
func ResealFile(_ context.Context, path string, keys *Keys) (ResealCount, error) {
	var total ResealCount
	err := Edit(path, keys, func(d *Doc) error {
		total = ResealCount{}
		for i := range d.entries {
			e := &d.entries[i]
			if e.err != nil {
				total.Broken++
				continue
			}
			if e.rec == nil {
				continue
			}
			rec := e.rec.Clone()
			c := keys.Reseal(rec)
			total.add(c)
			if c.TOTPResealed+c.RecoveryResealed > 0 {
				if err := d.Put(rec); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return total, fmt.Errorf("factors: resealing %s: %w", path, err)
	}
	return total, nil
}
