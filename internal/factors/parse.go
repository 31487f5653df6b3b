package factors

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/backupweb/backupweb/internal/userfile"
)

// MaxSize bounds the factors file: a file larger than this is refused as
// a whole (every user Broken) rather than read into memory.
const MaxSize = 16 << 20

// maxLine bounds one line (a user with many passkeys fits many times).
const maxLine = 1 << 20

// LineError is a problem at one line of the factors file. It names the
// file and the line, and the user when the line names one, never the
// line's content.
type LineError struct {
	File string
	Line int
	User string // "" when the line's user name cannot be read
	Err  error
}

// Error returns "FILE:LINE: [user NAME: ]problem".
func (e *LineError) Error() string {
	if e.User != "" {
		return fmt.Sprintf("%s:%d: user %s: %v", e.File, e.Line, e.User, e.Err)
	}
	return fmt.Sprintf("%s:%d: %v", e.File, e.Line, e.Err)
}

// Unwrap returns the problem.
func (e *LineError) Unwrap() error { return e.Err }

// Set is one reading of the factors file. It is never modified after
// Parse returns it, so it is read without locks.
type Set struct {
	records map[string]*Record
	broken  map[string]bool // users whose record cannot be used
	// all is true when the file could not be read as a whole, or holds a
	// line whose user is unknown: every user without a good record is
	// Broken.
	all      bool
	byHandle map[string]string // string(handle) -> user
	order    []string          // users in file order, for rewriting
}

// Lookup returns what the file says about user: their record with None or
// Enrolled, or Broken (nil record).
func (s *Set) Lookup(user string) (*Record, Status) {
	if s == nil {
		return nil, Broken
	}
	if s.broken[user] {
		return nil, Broken
	}
	r, ok := s.records[user]
	switch {
	case ok && r.HasFactor():
		return r, Enrolled
	case ok:
		return r, None
	case s.all:
		return nil, Broken
	default:
		return nil, None
	}
}

// LookupAmong is Lookup for a service that knows its users: a line that
// could not be used and names someone who is not a user (isUser false) is
// taken for a line whose user name was damaged, so it could be anyone's,
// and every user without a good record is Broken.
func (s *Set) LookupAmong(user string, isUser func(string) bool) (*Record, Status) {
	rec, st := s.Lookup(user)
	if st == None && rec == nil {
		for name := range s.broken {
			if !isUser(name) {
				return nil, Broken
			}
		}
	}
	return rec, st
}

// ByHandle returns the user whose WebAuthn user handle is h.
func (s *Set) ByHandle(h []byte) (string, bool) {
	if s == nil || len(h) == 0 {
		return "", false
	}
	u, ok := s.byHandle[string(h)]
	if !ok || s.broken[u] {
		return "", false
	}
	return u, true
}

// Users returns the users with a good record, in file order.
func (s *Set) Users() []string {
	var out []string
	for _, u := range s.order {
		if _, ok := s.records[u]; ok && !s.broken[u] {
			out = append(out, u)
		}
	}
	return out
}

// Len returns how many users have a good record.
func (s *Set) Len() int { return len(s.records) - len(s.broken) }

// brokenSet returns a Set in which every user is Broken: what a file that
// cannot be read at all means.
func brokenSet() *Set {
	return &Set{records: map[string]*Record{}, broken: map[string]bool{}, byHandle: map[string]string{}, all: true}
}

// entry is one line of the factors file that is not blank or a comment:
// its raw text (kept to write a line that does not parse back unchanged),
// the user it names ("" when it names none) and its record, or the
// problem.
type entry struct {
	line int
	raw  string
	user string
	rec  *Record
	err  error
}

// splitEntries reads the lines of a factors file. The error is for the
// file as a whole (too large, unreadable); line problems are in entries.
func splitEntries(name string, r io.Reader, keys *Keys) ([]entry, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxSize+1))
	if err != nil {
		return nil, fmt.Errorf("factors: reading %s: %w", name, err)
	}
	if len(data) > MaxSize {
		return nil, fmt.Errorf("factors: %s is larger than %d bytes", name, MaxSize)
	}
	var out []entry
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimRight(sc.Text(), "\r")
		if line == 1 {
			text = strings.TrimPrefix(text, "\ufeff")
		}
		trimmed := strings.TrimSpace(text)
		if trimmed == "" || strings.HasPrefix(trimmed, "#") {
			continue
		}
		e := entry{line: line, raw: text}
		user, body, ok := strings.Cut(text, ":")
		if !ok || userfile.ValidName(user) != nil {
			e.err = errors.New("not a record: expected NAME:{...} with a valid user name")
			out = append(out, e)
			continue
		}
		e.user = user
		e.rec, e.err = parseRecord(user, body, keys)
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("factors: %s:%d: unreadable line: %w", name, line+1, err)
	}
	return out, nil
}

// Parse reads a factors file from r; name is the file's name for errors.
// It always returns a usable Set. The error joins a *LineError per
// problem; the users they concern are Broken in the Set (every user
// without a good record when a line's user cannot be told, and every user
// when the file cannot be read as a whole). keys checks that every TOTP
// secret decrypts; nil skips that check (for tools that only list the
// file).
func Parse(name string, r io.Reader, keys *Keys) (*Set, error) {
	entries, err := splitEntries(name, r, keys)
	if err != nil {
		return brokenSet(), err
	}
	return buildSet(name, entries)
}

// buildSet makes a Set of entries and reports their problems.
func buildSet(name string, entries []entry) (*Set, error) {
	s := &Set{records: map[string]*Record{}, broken: map[string]bool{}, byHandle: map[string]string{}}
	var errs []error
	fail := func(e entry, err error) {
		errs = append(errs, &LineError{File: name, Line: e.line, User: e.user, Err: err})
		if e.user == "" {
			s.all = true
			return
		}
		s.broken[e.user] = true
	}
	for _, e := range entries {
		if e.err != nil {
			fail(e, e.err)
			continue
		}
		if _, dup := s.records[e.user]; dup {
			fail(e, errors.New("the user has a record on an earlier line too"))
			continue
		}
		if h := e.rec.Handle; len(h) > 0 {
			if other, taken := s.byHandle[string(h)]; taken {
				fail(e, fmt.Errorf("the passkey user handle is also user %s's", other))
				s.broken[other] = true
				continue
			}
			s.byHandle[string(h)] = e.user
		}
		s.records[e.user] = e.rec
		s.order = append(s.order, e.user)
	}
	return s, errors.Join(errs...)
}

// parseRecord decodes one record's JSON and checks it.
func parseRecord(user, body string, keys *Keys) (*Record, error) {
	dec := json.NewDecoder(strings.NewReader(body))
	dec.DisallowUnknownFields()
	rec := &Record{}
	if err := dec.Decode(rec); err != nil {
		return nil, fmt.Errorf("the record is not valid JSON of a factors record: %s", jsonProblem(err))
	}
	if dec.More() {
		return nil, errors.New("text after the record's JSON object")
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("text after the record's JSON object")
	}
	rec.User = user
	if rec.TOTP != nil {
		if rec.TOTP.Sealed == "" {
			return nil, errors.New("the TOTP entry has no secret")
		}
		if keys != nil {
			if _, err := keys.OpenTOTP(user, rec.TOTP.Sealed); err != nil {
				return nil, err
			}
		}
	}
	for i, h := range rec.Recovery {
		if len(h) != 43 && (len(h) != recoverySealedLen || !strings.HasPrefix(h, recoverySealPrefix)) {
			return nil, fmt.Errorf("recovery code hash %d is not a hash", i+1)
		}
	}
	if rec.Handle != nil && (len(rec.Handle) < 16 || len(rec.Handle) > 64) {
		return nil, errors.New("the passkey user handle must be 16 to 64 bytes")
	}
	seen := map[string]bool{}
	for i, p := range rec.Passkeys {
		if len(p.ID) == 0 || !json.Valid(p.Credential) || len(p.Credential) == 0 {
			return nil, fmt.Errorf("passkey %d has no credential id or no credential", i+1)
		}
		if seen[string(p.ID)] {
			return nil, fmt.Errorf("passkey %d repeats a credential id", i+1)
		}
		seen[string(p.ID)] = true
	}
	if len(rec.Passkeys) > 0 && len(rec.Handle) == 0 {
		return nil, errors.New("passkeys without a passkey user handle")
	}
	return rec, nil
}

// jsonProblem describes a JSON decoding error without quoting the input.
func jsonProblem(err error) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return fmt.Sprintf("syntax error at byte %d", syn.Offset)
	case errors.As(err, &typ):
		return fmt.Sprintf("field %q has the wrong type", typ.Field)
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "it ends too early"
	case strings.HasPrefix(err.Error(), "json: unknown field"):
		return "unknown field"
	default:
		return "cannot be decoded"
	}
}
