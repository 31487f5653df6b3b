package basic

import (
	"bufio"
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/backupweb/backupweb/internal/atomicfile"
)

// Known addresses. Basic has no cookie to tell a browser that signed in
// before from a stranger, so the address does it: an address (an IPv6
// /64) that signed in as a name within known_address_days is counted on
// its own for that name, as a device cookie is for flask-login, and a
// flood of guesses at the name from elsewhere cannot lock it out. What is
// kept is a keyed record, an HMAC of the name and the address, never the
// address itself: the file or the Redis keys tell nobody who signed in
// from where.

// KnownFile is the name of the file in the state folder that holds the
// known addresses when no shared state holds them.
const KnownFile = "basic-known-addresses"

// maxKnown bounds the records kept in this process: a sign-in adds one at
// most, and only a right password signs in.
const maxKnown = 10000

// SharedMarks is the ability of the program's shared state
// (auth.Deps.Shared; redisstore.Client) to keep keyed records for every
// instance at once. Ids are HMACs, never a secret or an address.
type SharedMarks interface {
	// Mark records id of kind for ttl.
	Mark(ctx context.Context, kind, id string, ttl time.Duration) error
	// Marked reports whether id of kind is recorded and unexpired.
	Marked(ctx context.Context, kind, id string) (bool, error)
}

// markKind names the records of known addresses in the shared state.
const markKind = "basic-known"

// marks keeps the records: in the shared state, or in this process and
// its file.
type marks interface {
	mark(ctx context.Context, id string, ttl time.Duration) error
	marked(ctx context.Context, id string) (bool, error)
}

// sharedMarks keeps the records in the shared state.
type sharedMarks struct{ s SharedMarks }

func (m sharedMarks) mark(ctx context.Context, id string, ttl time.Duration) error {
	return m.s.Mark(ctx, markKind, id, ttl)
}

func (m sharedMarks) marked(ctx context.Context, id string) (bool, error) {
	return m.s.Marked(ctx, markKind, id)
}

// localMarks keeps the records in memory and, when path is set, in that
// file (one "ID UNIX-EXPIRY" line each), so that a restart forgets no
// address.
type localMarks struct {
	path string
	now  func() time.Time
	log  *slog.Logger
	mu   sync.Mutex
	m    map[string]time.Time // id → expiry
	// unwritable tells that the last write of the file failed (logged
	// once until a write succeeds again).
	unwritable bool
}

// newLocalMarks reads path's records (none when path is empty or the file
// does not exist). A file that cannot be read or parsed is logged and its
// records are not used: no address is known, the strict side.
func newLocalMarks(path string, now func() time.Time, log *slog.Logger) *localMarks {
	l := &localMarks{path: path, now: now, log: log, m: map[string]time.Time{}}
	if path == "" {
		return l
	}
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return l
	}
	if err == nil {
		l.m, err = parseMarks(data, now())
	}
	if err != nil {
		l.m = map[string]time.Time{}
		log.Warn("auth: the known addresses cannot be read; every address counts as new", "auth_type", Name, "file", path, "err", err)
	}
	return l
}

// parseMarks reads the lines of a known-addresses file, leaving out those
// expired at now.
func parseMarks(data []byte, now time.Time) (map[string]time.Time, error) {
	m := map[string]time.Time{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		id, exp, ok := strings.Cut(sc.Text(), " ")
		secs, err := strconv.ParseInt(exp, 10, 64)
		if !ok || err != nil || len(id) != 2*sha256.Size || strings.Trim(id, "0123456789abcdef") != "" {
			return nil, fmt.Errorf("line %d: want a hex id and a Unix time", n)
		}
		if t := time.Unix(secs, 0); t.After(now) {
			m[id] = t
		}
	}
	return m, sc.Err()
}

// renewAfter is how much older than a fresh one a record must be before a
// sign-in writes the file again: a user signing in every few minutes does
// not rewrite it each time.
const renewAfter = 24 * time.Hour

func (l *localMarks) mark(_ context.Context, id string, ttl time.Duration) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	until := now.Add(ttl)
	if old, ok := l.m[id]; ok && until.Sub(old) < renewAfter {
		return nil
	}
	l.m[id] = until
	for id, t := range l.m {
		if !t.After(now) {
			delete(l.m, id)
		}
	}
	for len(l.m) > maxKnown {
		l.dropSoonest()
	}
	if l.path == "" {
		return nil
	}
	var b bytes.Buffer
	for id, t := range l.m {
		fmt.Fprintf(&b, "%s %d\n", id, t.Unix())
	}
	if err := atomicfile.Write(l.path, b.Bytes(), 0o600); err != nil {
		// Kept in memory all the same; said once, not at every sign-in.
		if !l.unwritable {
			l.unwritable = true
			l.log.Warn("auth: the known addresses cannot be written; they are kept in memory only and forgotten at a restart (is [server] state_dir a folder the service can write?)",
				"auth_type", Name, "file", l.path, "err", err)
		}
		return nil
	}
	if l.unwritable {
		l.unwritable = false
		l.log.Info("auth: the known addresses are written again", "auth_type", Name, "file", l.path)
	}
	return nil
}

// dropSoonest forgets the record that expires first.
func (l *localMarks) dropSoonest() {
	var first string
	var at time.Time
	for id, t := range l.m {
		if first == "" || t.Before(at) {
			first, at = id, t
		}
	}
	delete(l.m, first)
}

func (l *localMarks) marked(_ context.Context, id string) (bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	t, ok := l.m[id]
	return ok && t.After(l.now()), nil
}

// knownKey is the key of the records of a credential: an HMAC under the
// secret key (when the program has one) of the user name and the
// configured password, so that records cannot be made or recognised
// without both, and rotating the password (a leak) forgets every address
// the old one signed in from.
func knownKey(secret []byte, user, password string) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte("backupweb basic known address\x00" + user + "\x00" + password))
	return m.Sum(nil)
}

// knownID is the record of user signing in from addr (a throttle.AddrKey).
func knownID(key []byte, user, addr string) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(user + "\x00" + addr))
	return hex.EncodeToString(m.Sum(nil))
}
