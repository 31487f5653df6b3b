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
	"github.com/backupweb/backupweb/internal/userstate"
)

// StateKeys keeps passkeys in the users' state (package userstate: the
// factors file, or the shared store): each user's WebAuthn user handle
// and passkeys in their record, the credential as go-webauthn's JSON. A
// user whose record cannot be read is an error, never "no passkeys":
// fail closed.
type StateKeys struct {
	store userstate.Store
}

var _ Keys = (*StateKeys)(nil)

// NewStateKeys returns Keys over store.
func NewStateKeys(store userstate.Store) *StateKeys { return &StateKeys{store: store} }

// Handle implements Keys.
func (k *StateKeys) Handle(ctx context.Context, user string, create bool) ([]byte, bool, error) {
	rec, err := k.store.Factors(ctx, user)
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
	err = k.store.EditFactors(ctx, user, func(rec *factors.Record) error {
		if len(rec.Handle) == 0 {
			rec.Handle = factors.NewHandle()
		}
		h = bytes.Clone(rec.Handle)
		return nil
	})
	if err != nil {
		return nil, false, err
	}
	return h, true, nil
}

// Owner implements Keys.
func (k *StateKeys) Owner(ctx context.Context, handle []byte) (string, bool, error) {
	return k.store.Owner(ctx, handle)
}

// Passkeys implements Keys.
func (k *StateKeys) Passkeys(ctx context.Context, user string) ([]Passkey, error) {
	rec, err := k.store.Factors(ctx, user)
	if err != nil || rec == nil {
		return nil, err
	}
	out := make([]Passkey, 0, len(rec.Passkeys))
	for i, p := range rec.Passkeys {
		var c webauthn.Credential
		if err := json.Unmarshal(p.Credential, &c); err != nil {
			return nil, fmt.Errorf("user %s: passkey %d: %w", user, i+1, err)
		}
		if !bytes.Equal(c.ID, p.ID) {
			return nil, fmt.Errorf("user %s: passkey %d: the credential id does not match the record's", user, i+1)
		}
		out = append(out, Passkey{Name: p.Name, Created: p.Created, LastUsed: p.LastUsed, Credential: c})
	}
	return out, nil
}

// Stamp implements Keys: the stamp of user's record (factors.Record.Stamp).
func (k *StateKeys) Stamp(ctx context.Context, user string) (string, error) {
	rec, err := k.store.Factors(ctx, user)
	if err != nil {
		return "", err
	}
	return rec.Stamp(), nil
}

// AddPasskey implements Keys: in the store's one edit step, the user's
// stamp is checked before the passkey is added.
func (k *StateKeys) AddPasskey(ctx context.Context, user string, p Passkey, since string) error {
	body, err := json.Marshal(p.Credential)
	if err != nil {
		return err
	}
	err = k.store.EditFactors(ctx, user, func(rec *factors.Record) error {
		if rec.Stamp() != since {
			return factors.ErrChanged
		}
		if slices.ContainsFunc(rec.Passkeys, func(o factors.Passkey) bool { return bytes.Equal(o.ID, p.Credential.ID) }) {
			return errors.New("this credential is registered already")
		}
		if len(rec.Handle) == 0 {
			rec.Handle = factors.NewHandle()
		}
		rec.Passkeys = append(rec.Passkeys, factors.Passkey{Name: p.Name, Created: p.Created, ID: bytes.Clone(p.Credential.ID), Credential: body})
		return nil
	})
	if errors.Is(err, factors.ErrChanged) {
		return fmt.Errorf("%w: %w", ErrFactorsChanged, err)
	}
	return err
}

// RemovePasskey implements Keys.
func (k *StateKeys) RemovePasskey(ctx context.Context, user string, id []byte) (bool, error) {
	removed := false
	err := k.store.EditFactors(ctx, user, func(rec *factors.Record) error {
		n := len(rec.Passkeys)
		rec.Passkeys = slices.DeleteFunc(rec.Passkeys, func(p factors.Passkey) bool { return bytes.Equal(p.ID, id) })
		if removed = len(rec.Passkeys) != n; !removed {
			return userstate.ErrUnchanged
		}
		return nil
	})
	return removed, err
}

// UsePasskey implements Keys: the store compares the new sign count with
// the stored one and updates it in one step.
func (k *StateKeys) UsePasskey(ctx context.Context, user string, cred webauthn.Credential, at time.Time) error {
	body, err := json.Marshal(cred)
	if err != nil {
		return err
	}
	return k.store.UsePasskey(ctx, user, cred.ID, cred.Authenticator.SignCount, body, at)
}
