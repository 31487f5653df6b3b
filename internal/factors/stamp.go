package factors

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
)

// ErrChanged refuses to store a factor for a user whose factors changed
// since the enrolment began: of two enrolments of one user at the same
// time, the first to finish is stored and the other gets this error.
var ErrChanged = errors.New("factors: the user's second factors changed since the enrolment began")

// Stamp returns a value that changes whenever r's factors change: a TOTP
// secret set or removed, a passkey added or removed. It is "" for a record
// without a factor (or no record). Recovery codes, the user handle and a
// passkey's sign count are not part of it: spending a code or signing in
// changes no stamp.
//
// An enrolment notes the stamp when it begins and stores its factor only
// while the stamp, read under the factors file's lock (see Edit), is the
// same: the check and the write are one step, whatever the kind of factor.
func (r *Record) Stamp() string {
	if !r.HasFactor() {
		return ""
	}
	h := sha256.New()
	field := func(kind string, b []byte) {
		h.Write([]byte(kind))
		h.Write(binary.BigEndian.AppendUint32(nil, uint32(len(b))))
		h.Write(b)
	}
	if r.TOTP != nil {
		field("totp", []byte(r.TOTP.Sealed))
	}
	for _, p := range r.Passkeys {
		field("passkey", p.ID)
	}
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil))
}

// CheckStamp returns ErrChanged unless user's record in d has the stamp
// want (see Record.Stamp). Call it inside Edit, before the change it
// guards, so that the check and the write happen under one lock.
func (d *Doc) CheckStamp(user, want string) error {
	rec, err := d.Get(user)
	if err != nil {
		return err
	}
	if rec.Stamp() != want {
		return ErrChanged
	}
	return nil
}
