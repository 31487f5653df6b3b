package login

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/backupweb/backupweb/internal/filewatch"
	"github.com/backupweb/backupweb/internal/password"
	"github.com/backupweb/backupweb/internal/userfile"
)

// userSet is one good reading of the user file. It is never modified after
// it is built, so requests read it without locks.
type userSet struct {
	hashes map[string]string // user name -> stored value (hash or plain password)
	// creds holds each user's credential fingerprint (session.Manager's
	// Fingerprint of the stored value), computed once per load: a session
	// made with another one is refused.
	creds map[string]string
	// prevCreds holds them under the previous secret key during a
	// rotation (nil otherwise): a session made before it carries one.
	prevCreds map[string]string
	// decoyCost is the bcrypt cost an unknown user name is checked at: the
	// cost most of the hashes have, so that a failed login for an unknown
	// name takes as long as one for most known names.
	decoyCost int
	// directory is set when users are the directory's (users = ldap):
	// hashes is empty, every name may be a user, and a session's
	// credential fingerprint is that of directoryCred(name), made with fp
	// (and prevFp, during a secret key rotation).
	directory bool
	fp        func(credential string) string
	prevFp    func(credential string) (string, bool)
}

// directoryUsers is the userSet of users = ldap: who is a user is the
// directory's to say at each sign-in, never asked again by a signed-in
// request.
func directoryUsers() *userSet {
	return &userSet{hashes: map[string]string{}, decoyCost: password.Cost, directory: true}
}

// directoryCred is the stored value a directory user's sessions are bound
// to: the source and the name, so that a session made while users came
// from a user file is not one of the directory's, nor the reverse.
func directoryCred(name string) string { return "ldap\x00" + name }

// has reports whether name is a user (any name, for the directory: its
// tokens and second factors are the name's).
func (u *userSet) has(name string) bool {
	if u.directory {
		return name != ""
	}
	_, ok := u.hashes[name]
	return ok
}

// cred returns name's credential fingerprint under the current key.
func (u *userSet) cred(name string) (string, bool) {
	if u.directory {
		if name == "" {
			return "", false
		}
		return u.fp(directoryCred(name)), true
	}
	c, ok := u.creds[name]
	return c, ok
}

// bind computes the credential fingerprint of every user with fp, and
// with prev (the previous secret key's, when it has one). It must run
// before the set is published.
func (u *userSet) bind(fp func(credential string) string, prev func(credential string) (string, bool)) *userSet {
	if u.directory {
		u.fp, u.prevFp = fp, prev
		return u
	}
	u.creds = make(map[string]string, len(u.hashes))
	u.prevCreds = nil
	for name, h := range u.hashes {
		u.creds[name] = fp(h)
		if p, ok := prev(h); ok {
			if u.prevCreds == nil {
				u.prevCreds = make(map[string]string, len(u.hashes))
			}
			u.prevCreds[name] = p
		}
	}
	return u
}

// credential returns name's stored value (hash or plain password), what
// its sessions' credential fingerprints are made from.
func (u *userSet) credential(name string) (string, bool) {
	if u.directory {
		return directoryCred(name), name != ""
	}
	h, ok := u.hashes[name]
	return h, ok
}

// admits reports whether a session of name made with the credential
// fingerprint cred is still good: the user is listed, with the same stored
// value as when the session began.
func (u *userSet) admits(name, cred string) bool {
	if u.directory {
		if name == "" || cred == "" {
			return false
		}
		if equalConstantTime(u.fp(directoryCred(name)), cred) {
			return true
		}
		prev, ok := u.prevFp(directoryCred(name))
		return ok && equalConstantTime(prev, cred)
	}
	want, ok := u.creds[name]
	if ok && cred != "" && equalConstantTime(want, cred) {
		return true
	}
	prev, ok := u.prevCreds[name]
	return ok && cred != "" && equalConstantTime(prev, cred)
}

// equalConstantTime compares two fingerprints in time that depends only on
// their length (public: every fingerprint has the same), without the
// allocations of converting them to byte slices on every request.
func equalConstantTime(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	var diff byte
	for i := 0; i < len(a); i++ {
		diff |= a[i] ^ b[i]
	}
	return subtle.ConstantTimeByteEq(diff, 0) == 1
}

// keepUnchanged returns the users of prev whose line is the same in
// entries, the good lines of a user file that has problems: a broken edit
// never grants what the new file does not, and never keeps a user whose
// line it changed or removed.
func keepUnchanged(prev *userSet, entries []userfile.Entry) *userSet {
	next := &userSet{hashes: map[string]string{}, decoyCost: prev.decoyCost}
	for _, e := range entries {
		if h, ok := prev.hashes[e.Name]; ok && h == e.Hash {
			next.hashes[e.Name] = h
		}
	}
	return next
}

// newUserSet builds the set from parsed entries.
func newUserSet(entries []userfile.Entry, bcrypt bool) *userSet {
	u := &userSet{hashes: make(map[string]string, len(entries)), decoyCost: password.Cost}
	costs := map[int]int{}
	for _, e := range entries {
		u.hashes[e.Name] = e.Hash
		if bcrypt {
			if c, err := password.ParseHash(e.Hash); err == nil {
				costs[c]++
			}
		}
	}
	best := 0
	for c, n := range costs {
		if n > best || n == best && c > u.decoyCost {
			u.decoyCost, best = c, n
		}
	}
	return u
}

// endedUsers returns the names whose sessions must end when next replaces
// prev: users removed, and users whose password changed.
func endedUsers(prev, next *userSet) []string {
	var names []string
	for name, h := range prev.hashes {
		if nh, ok := next.hashes[name]; !ok || nh != h {
			names = append(names, name)
		}
	}
	return names
}

// reading is the result of reading the user file once.
type reading struct {
	set    *userSet
	stamp  filewatch.Stamp
	digest [sha256.Size]byte
	racy   bool
	// good holds the entries of the good lines when the file was read but
	// has problems (see userfile.ParseAll); nil otherwise.
	good []userfile.Entry
	// empty is true when the file is well formed but lists no users.
	empty bool
	// entries are the users read from a good file.
	entries []userfile.Entry
}

// readUsers reads and parses the user file. The stamp is taken from the
// open file, so it describes the very bytes parsed, and is returned even
// when the content has problems. Errors name the file and line, never the
// content (see package userfile).
func readUsers(path string, bcrypt bool) (reading, error) {
	f, err := os.Open(path)
	if err != nil {
		return reading{}, fmt.Errorf("login: reading the user file: %w", err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return reading{}, fmt.Errorf("login: reading the user file: %w", err)
	}
	st := filewatch.Of(info)
	rd := reading{stamp: st, racy: st.Racy()}
	data, err := io.ReadAll(io.LimitReader(f, userfile.MaxSize+1))
	if err != nil {
		return rd, fmt.Errorf("login: reading the user file %s: %w", path, err)
	}
	entries, err := userfile.ParseAll(path, bytes.NewReader(data), bcrypt)
	clear(data)
	if err != nil {
		if errors.Is(err, userfile.ErrNoUsers) {
			rd.empty = true
		}
		rd.good = entries
		return rd, fmt.Errorf("login: %w", err)
	}
	rd.set, rd.digest, rd.entries = newUserSet(entries, bcrypt), digestOf(entries), entries
	return rd, nil
}

// digestOf summarises the users read, so that re-reading an unchanged file
// (a racy stamp, a SIGHUP without an edit) is recognised and costs nothing.
func digestOf(entries []userfile.Entry) [sha256.Size]byte {
	h := sha256.New()
	for _, e := range entries {
		fmt.Fprintf(h, "%d:%s\x00%d:%s\x00", len(e.Name), e.Name, len(e.Hash), e.Hash)
	}
	var d [sha256.Size]byte
	h.Sum(d[:0])
	return d
}
