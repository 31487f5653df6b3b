package passkey

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/go-webauthn/webauthn/webauthn"

	"github.com/backupweb/backupweb/internal/factors"
)

// FactorsKeys keeps passkeys in the factors file (package factors): each
// user's WebAuthn user handle and passkeys in their record, the credential
// as go-webauthn's JSON. A user whose record is Broken is an error, never
// "no passkeys": fail closed.
type FactorsKeys struct {
	store *factors.Store
}

var _ Keys = (*FactorsKeys)(nil)

// NewFactorsKeys returns Keys over store.
func NewFactorsKeys(store *factors.Store) *FactorsKeys { return &FactorsKeys{store: store} }

// errBroken is the error for a user whose factors cannot be read.
func errBroken(path, user string) error {
	return fmt.Errorf("the factors of %s in %s cannot be read; fix the file or reset their factors", user, path)
}

// lookup returns user's record (nil: none) or an error when it is Broken.
// The file is polled first, so that a change made with the user command
// (a reset of the user's factors) is seen at once.
func (k *FactorsKeys) lookup(user string) (*factors.Record, error) {
	k.store.Poll()
	rec, st := k.store.Lookup(user)
	if st == factors.Broken {
		return nil, errBroken(k.store.Path(), user)
	}
	return rec, nil
}

// Handle implements Keys.
func (k *FactorsKeys) Handle(_ context.Context, user string, create bool) ([]byte, bool, error) {
	rec, err := k.lookup(user)
	if err != nil {
		return nil, false, err
	}
	if rec != nil && len(rec.Handle) > 0 {
		return bytes.Clone(rec.Handle), true, nil
	}
	if !create {
		return nil, false, nil
	}
	var h []byte
	err = k.store.Edit(func(d *factors.Doc) error {
		rec, err := d.GetOrNew(user)
		if err != nil {
			return err
		}
		h = bytes.Clone(rec.Handle)
		return d.Put(rec)
	})
	if err != nil {
		return nil, false, err
	}
	return h, true, nil
}

// Owner implements Keys.
func (k *FactorsKeys) Owner(_ context.Context, handle []byte) (string, bool, error) {
	k.store.Poll()
	user, ok := k.store.Set().ByHandle(handle)
	return user, ok, nil
}

// Passkeys implements Keys.
func (k *FactorsKeys) Passkeys(_ context.Context, user string) ([]Passkey, error) {
	rec, err := k.lookup(user)
	if err != nil || rec == nil {
		return nil, err
	}
	out := make([]Passkey, 0, len(rec.Passkeys))
	for i, p := range rec.Passkeys {
		var c webauthn.Credential
		if err := json.Unmarshal(p.Credential, &c); err != nil {
			return nil, fmt.Errorf("%s: user %s: passkey %d: %w", k.store.Path(), user, i+1, err)
		}
		if !bytes.Equal(c.ID, p.ID) {
			return nil, fmt.Errorf("%s: user %s: passkey %d: the credential id does not match the record's", k.store.Path(), user, i+1)
		}
		out = append(out, Passkey{Name: p.Name, Created: p.Created, LastUsed: p.LastUsed, Credential: c})
	}
	return out, nil
}

// Stamp implements Keys: the stamp of user's record (factors.Record.Stamp).
func (k *FactorsKeys) Stamp(_ context.Context, user string) (string, error) {
	rec, err := k.lookup(user)
	if err != nil {
		return "", err
	}
	return rec.Stamp(), nil
}

// AddPasskey implements Keys: under the factors file's lock, the user's
// stamp is checked (factors.Doc.CheckStamp) before the passkey is added.
func (k *FactorsKeys) AddPasskey(_ context.Context, user string, p Passkey, since string) error {
	body, err := json.Marshal(p.Credential)
	if err != nil {
		return err
	}
	err = k.store.Edit(func(d *factors.Doc) error {
		if err := d.CheckStamp(user, since); err != nil {
			return err
		}
		if _, _, taken := d.FindCredential(p.Credential.ID); taken {
			return errors.New("this credential is registered already")
		}
		rec, err := d.GetOrNew(user)
		if err != nil {
			return err
		}
		rec.Passkeys = append(rec.Passkeys, factors.Passkey{Name: p.Name, Created: p.Created, ID: bytes.Clone(p.Credential.ID), Credential: body})
		return d.Put(rec)
	})
	if errors.Is(err, factors.ErrChanged) {
		return fmt.Errorf("%w: %w", ErrFactorsChanged, err)
	}
	return err
}

// RemovePasskey implements Keys.
func (k *FactorsKeys) RemovePasskey(_ context.Context, user string, id []byte) (bool, error) {
	removed := false
	err := k.store.Edit(func(d *factors.Doc) error {
		rec, err := d.Get(user)
		if err != nil || rec == nil {
			return err
		}
		n := len(rec.Passkeys)
		rec.Passkeys = slices.DeleteFunc(rec.Passkeys, func(p factors.Passkey) bool { return bytes.Equal(p.ID, id) })
		if removed = len(rec.Passkeys) != n; !removed {
			return nil
		}
		return d.Put(rec)
	})
	return removed, err
}

// UsePasskey implements Keys.
func (k *FactorsKeys) UsePasskey(_ context.Context, user string, cred webauthn.Credential, at time.Time) error {
	body, err := json.Marshal(cred)
	if err != nil {
		return err
	}
	return k.store.Edit(func(d *factors.Doc) error {
		owner, i, ok := d.FindCredential(cred.ID)
		if !ok || owner != user {
			return factors.ErrNoSuchCredential
		}
		rec, err := d.Get(user)
		if err != nil {
			return err
		}
		rec.Passkeys[i].Credential = body
		rec.Passkeys[i].LastUsed = at.UTC()
		return d.Put(rec)
	})
}
