package factors

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"

	"github.com/backupweb/backupweb/internal/atomicfile"
)

// Suffix is added to the user file's path to name the factors file when
// factors_file is not set.
const Suffix = ".factors"

// DefaultPath returns the factors file of a user file: its path + Suffix.
func DefaultPath(usersFile string) string { return usersFile + Suffix }

// fileMode is the mode the factors file is always written with.
const fileMode fs.FileMode = 0o600

// Read reads the factors file at path. A file that does not exist holds no
// factors (an empty Set, no error); any other failure to read it makes
// every user Broken.
func Read(path string, keys *Keys) (*Set, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &Set{records: map[string]*Record{}, broken: map[string]bool{}, byHandle: map[string]string{}}, nil
	}
	if err != nil {
		return brokenSet(), fmt.Errorf("factors: %w", err)
	}
	return Parse(path, bytes.NewReader(data), keys)
}

// ErrBrokenRecord is returned by Doc methods asked to change a user whose
// line does not parse: only Delete (a reset) may touch it.
var ErrBrokenRecord = errors.New("the user's line in the factors file does not parse; reset the user's factors (`backupweb user factors -reset`) or fix the line")

// Doc is the factors file being edited (see Edit). Lines that do not parse
// are kept as they are, so that an edit for one user never loses another
// user's line, however broken.
type Doc struct {
	path    string
	entries []entry
}

// Get returns a copy of user's record, nil when they have none.
func (d *Doc) Get(user string) (*Record, error) {
	var found *Record
	for _, e := range d.entries {
		if e.user != user {
			continue
		}
		if e.err != nil || found != nil {
			return nil, fmt.Errorf("factors: %s:%d: user %s: %w", d.path, e.line, user, ErrBrokenRecord)
		}
		found = e.rec
	}
	return found.Clone(), nil
}

// GetOrNew returns a copy of user's record, or a new one with a fresh
// WebAuthn user handle when they have none; a record without a handle is
// given one.
func (d *Doc) GetOrNew(user string) (*Record, error) {
	rec, err := d.Get(user)
	if err != nil {
		return nil, err
	}
	if rec == nil {
		rec = &Record{User: user}
	}
	if len(rec.Handle) == 0 {
		rec.Handle = NewHandle()
	}
	return rec, nil
}

// Put stores rec as its user's record, replacing the old one. A record
// with nothing in it removes the line.
func (d *Doc) Put(rec *Record) error {
	if rec == nil || rec.User == "" {
		return errors.New("factors: a record without a user")
	}
	if _, err := d.Get(rec.User); err != nil {
		return err
	}
	for i, e := range d.entries {
		if e.user != rec.User {
			continue
		}
		if h := rec.Handle; len(h) > 0 {
			for _, o := range d.entries {
				if o.user != rec.User && o.rec != nil && bytes.Equal(o.rec.Handle, h) {
					return fmt.Errorf("factors: the passkey user handle of %s is taken", rec.User)
				}
			}
		}
		if rec.empty() {
			d.entries = slices.Delete(d.entries, i, i+1)
			return nil
		}
		d.entries[i] = entry{user: rec.User, rec: rec.Clone()}
		return nil
	}
	if !rec.empty() {
		d.entries = append(d.entries, entry{user: rec.User, rec: rec.Clone()})
	}
	return nil
}

// Delete removes every line of user, broken ones included: an
// administrator's reset of all their factors. It reports whether there
// was any.
func (d *Doc) Delete(user string) bool {
	n := len(d.entries)
	d.entries = slices.DeleteFunc(d.entries, func(e entry) bool { return e.user == user })
	return len(d.entries) != n
}

// FindCredential returns the user holding the passkey with credential id
// id and its index in their record's Passkeys.
func (d *Doc) FindCredential(id []byte) (user string, index int, ok bool) {
	for _, e := range d.entries {
		if e.rec == nil {
			continue
		}
		for i, p := range e.rec.Passkeys {
			if bytes.Equal(p.ID, id) {
				return e.user, i, true
			}
		}
	}
	return "", -1, false
}

// bytes returns the file's new text.
func (d *Doc) bytes() ([]byte, error) {
	var b bytes.Buffer
	bw := bufio.NewWriter(&b)
	bw.WriteString("# backupweb factors file: the second factors of the users of the user file.\n")
	bw.WriteString("# Change it with `backupweb user totp|recovery-codes|factors`; a line that does not parse stops its user from signing in.\n")
	for _, e := range d.entries {
		if e.rec == nil || e.err != nil {
			bw.WriteString(e.raw)
			bw.WriteByte('\n')
			continue
		}
		j, err := json.Marshal(e.rec)
		if err != nil {
			return nil, fmt.Errorf("factors: encoding the record of %s: %w", e.user, err)
		}
		bw.WriteString(e.user)
		bw.WriteByte(':')
		bw.Write(j)
		bw.WriteByte('\n')
	}
	bw.Flush()
	return b.Bytes(), nil
}

// Edit changes the factors file at path: under an exclusive lock (a
// ".lock" file beside it, flock), it reads the file, runs fn on it and,
// when fn returns nil, writes the result atomically (a temporary file in
// the same directory, mode 0600, flushed, renamed over path, the directory
// flushed). An error from fn leaves the file unchanged and is returned. A
// file that cannot be read as a whole is not edited.
func Edit(path string, keys *Keys, fn func(*Doc) error) error {
	return atomicfile.Edit(path, fileMode, func() ([]byte, error) {
		data, err := os.ReadFile(path)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("factors: %w", err)
		}
		entries, err := splitEntries(path, bytes.NewReader(data), keys)
		if err != nil {
			return nil, err
		}
		d := &Doc{path: path, entries: entries}
		if err := fn(d); err != nil {
			return nil, err
		}
		return d.bytes()
	})
}
