package userstate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/backupweb/backupweb/internal/factors"
	"github.com/backupweb/backupweb/internal/tokens"
)

// FileStore keeps user state in the factors file and the tokens file
// beside the user file (packages factors and tokens): one instance's
// disk. Every change is made under the file's lock, so the command line
// and the service never lose each other's changes, and every
// compare-and-update (a sign count, a recovery code) is one step under
// that lock.
type FileStore struct {
	factors *factors.Store
	tokens  *tokens.Store
	isUser  func(string) bool
}

var _ Store = (*FileStore)(nil)

// NewFileStore returns the store of the factors file f and the tokens
// file t. f may be nil when second factors are off: then users have no
// factors and a change to them is an error. isUser, when not nil, tells the users of the user file: a line
// of the factors file that cannot be used and names someone who is not a
// user is taken for a line whose user name was damaged, so that every
// user without a good record is Broken (factors.Set.LookupAmong).
func NewFileStore(f *factors.Store, t *tokens.Store, isUser func(string) bool) *FileStore {
	return &FileStore{factors: f, tokens: t, isUser: isUser}
}

// FactorsFile returns the factors file's store.
func (s *FileStore) FactorsFile() *factors.Store { return s.factors }

// TokensFile returns the tokens file's store.
func (s *FileStore) TokensFile() *tokens.Store { return s.tokens }

// errNoFactorsFile refuses a change of factors without a factors file.
var errNoFactorsFile = errors.New("userstate: second factors are off (no factors file)")

func (s *FileStore) lookup(user string) (*factors.Record, factors.Status) {
	if s.factors == nil {
		return nil, factors.None
	}
	set := s.factors.Set()
	if s.isUser == nil {
		return set.Lookup(user)
	}
	return set.LookupAmong(user, s.isUser)
}

// Factors implements Store. The file is polled first, so that a change
// made by a command is seen at once.
func (s *FileStore) Factors(_ context.Context, user string) (*factors.Record, error) {
	if s.factors == nil {
		return nil, nil
	}
	s.factors.Poll()
	rec, st := s.lookup(user)
	if st == factors.Broken {
		return nil, &BrokenError{User: user, Where: s.factors.Path(), Err: errors.New("the user's line, or a line that could be theirs, does not parse or does not decrypt")}
	}
	return rec.Clone(), nil
}

// Status implements Store from the last reading of the file, in memory.
func (s *FileStore) Status(_ context.Context, user string) (factors.Status, error) {
	_, st := s.lookup(user)
	return st, nil
}

// EditFactors implements Store under the factors file's lock.
func (s *FileStore) EditFactors(_ context.Context, user string, fn func(*factors.Record) error) error {
	if s.factors == nil {
		return errNoFactorsFile
	}
	err := s.factors.Edit(func(d *factors.Doc) error {
		rec, err := d.Get(user)
		if err != nil {
			return &BrokenError{User: user, Where: s.factors.Path(), Err: err}
		}
		if rec == nil {
			rec = &factors.Record{User: user}
		}
		write, err := editResult(fn(rec))
		if !write {
			if err == nil {
				err = ErrUnchanged
			}
			return err
		}
		rec.User = user
		return d.Put(rec)
	})
	if errors.Is(err, ErrUnchanged) {
		return nil
	}
	return err
}

// ResetFactors implements Store.
func (s *FileStore) ResetFactors(_ context.Context, user string) (bool, error) {
	if s.factors == nil {
		return false, errNoFactorsFile
	}
	gone := false
	err := s.factors.Edit(func(d *factors.Doc) error {
		if gone = d.Delete(user); !gone {
			return ErrUnchanged
		}
		return nil
	})
	if errors.Is(err, ErrUnchanged) {
		err = nil
	}
	return gone, err
}

// Owner implements Store.
func (s *FileStore) Owner(_ context.Context, handle []byte) (string, bool, error) {
	if s.factors == nil {
		return "", false, nil
	}
	s.factors.Poll()
	user, ok := s.factors.Set().ByHandle(handle)
	return user, ok, nil
}

// UsePasskey implements Store: the stored count is read, compared and
// replaced under the factors file's lock.
func (s *FileStore) UsePasskey(_ context.Context, user string, id []byte, count uint32, credential json.RawMessage, at time.Time) error {
	if !json.Valid(credential) {
		return errors.New("userstate: the credential is not valid JSON")
	}
	if s.factors == nil {
		return errNoFactorsFile
	}
	return s.factors.Edit(func(d *factors.Doc) error {
		owner, i, ok := d.FindCredential(id)
		if !ok || owner != user {
			return ErrNoSuchPasskey
		}
		rec, err := d.Get(user)
		if err != nil {
			return &BrokenError{User: user, Where: s.factors.Path(), Err: err}
		}
		stored, err := SignCount(rec.Passkeys[i].Credential)
		if err != nil {
			return &BrokenError{User: user, Where: s.factors.Path(), Err: err}
		}
		if !CountAllowed(stored, count) {
			return fmt.Errorf("%w (stored %d, presented %d)", ErrCountNotAbove, stored, count)
		}
		rec.Passkeys[i].Credential = bytes.Clone(credential)
		rec.Passkeys[i].LastUsed = at.UTC()
		return d.Put(rec)
	})
}

// Users implements Store.
func (s *FileStore) Users(context.Context) ([]string, error) {
	if s.factors == nil {
		return nil, nil
	}
	s.factors.Poll()
	return s.factors.Set().Users(), nil
}

// Token implements Store.
func (s *FileStore) Token(_ context.Context, token string) (*tokens.Token, tokens.Status, error) {
	t, st := s.tokens.Lookup(token)
	if t != nil {
		c := *t
		t = &c
	}
	return t, st, nil
}

// TokensOf implements Store.
func (s *FileStore) TokensOf(_ context.Context, user string) ([]tokens.Token, error) {
	return s.tokens.Of(user), nil
}

// AllTokens implements Store.
func (s *FileStore) AllTokens(context.Context) ([]tokens.Token, error) {
	list, err := tokens.Read(s.tokens.Path())
	if err != nil {
		return nil, err
	}
	out := make([]tokens.Token, len(list))
	for i, t := range list {
		out[i] = *t
	}
	return out, nil
}

// AddToken implements Store.
func (s *FileStore) AddToken(_ context.Context, t tokens.Token) error {
	return s.tokens.Edit(func(d *tokens.Doc) error {
		for _, o := range d.List {
			if o.ID == t.ID || o.Hash == t.Hash {
				return fmt.Errorf("userstate: the token %s is stored already", t.ID)
			}
		}
		d.Add(&t)
		return nil
	})
}

// RevokeToken implements Store.
func (s *FileStore) RevokeToken(_ context.Context, user, id string) (tokens.Token, error) {
	var gone *tokens.Token
	err := s.tokens.Edit(func(d *tokens.Doc) error {
		for _, t := range d.List {
			if t.ID == id && (user == "" || t.User == user) {
				gone = d.Revoke(id)
				return nil
			}
		}
		return tokens.ErrNoToken
	})
	if err != nil {
		return tokens.Token{}, err
	}
	return *gone, nil
}

// RevokeTokensOf implements Store.
func (s *FileStore) RevokeTokensOf(_ context.Context, user string) (int, error) {
	n := 0
	err := s.tokens.Edit(func(d *tokens.Doc) error { n = len(d.RevokeUser(user)); return nil })
	return n, err
}

// TokenUsed implements Store: the time reaches the file at the tokens
// store's next flush.
func (s *FileStore) TokenUsed(_ context.Context, t *tokens.Token, addr string, _ time.Time) bool {
	return s.tokens.Used(t, addr)
}
