package session

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
)

// JournalName is the file, beside FileName, where a FileStore appends each
// login, logout and user deletion as one line before acknowledging it. A
// login then costs one short append and one fsync however many sessions are
// live, instead of a rewrite of the whole session file; the journal is
// folded into the session file (and emptied) by the write-behind and at
// Close.
const JournalName = "sessions.journal"

// Journal operations.
const (
	opPut        = "put"
	opDelete     = "del"
	opDeleteUser = "deluser"
)

// journalEntry is one line of the journal. Seq orders the entries: they are
// numbered under the store's lock when the change is made, and may reach
// the file in another order, so replay sorts them; entries whose Seq the
// session file already includes are skipped.
type journalEntry struct {
	Seq  uint64  `json:"seq"`
	Op   string  `json:"op"`
	Key  string  `json:"key,omitempty"`
	User string  `json:"user,omitempty"`
	Rec  *Record `json:"rec,omitempty"`
}

// apply replays e on t.
func (e journalEntry) apply(t *table) {
	switch e.Op {
	case opPut:
		t.put(e.Key, *e.Rec)
	case opDelete:
		t.remove(e.Key)
	case opDeleteUser:
		t.removeUser(e.User)
	}
}

// readJournal returns the entries of the journal at path with Seq above
// after, in Seq order. A missing journal is empty. A last line without its
// newline is a write a crash cut short and is ignored (it was never
// acknowledged); any other line that does not parse is an error naming the
// file, so a damaged journal stops the program rather than resurrecting or
// losing sessions silently.
func readJournal(path string, after uint64) (entries []journalEntry, lines int, err error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, fmt.Errorf("session: read session journal: %w", err)
	}
	if i := bytes.LastIndexByte(data, '\n'); i < len(data)-1 {
		data = data[:i+1] // drop a torn last line
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		lines++
		var e journalEntry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil || !e.valid() {
			return nil, lines, fmt.Errorf("session: session journal %s is corrupt at line %d (delete it and %s to sign everyone out)", path, lines, FileName)
		}
		if e.Seq > after {
			entries = append(entries, e)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, lines, fmt.Errorf("session: read session journal %s at line %d: %w", path, lines+1, err)
	}
	slices.SortStableFunc(entries, func(a, b journalEntry) int {
		switch {
		case a.Seq < b.Seq:
			return -1
		case a.Seq > b.Seq:
			return 1
		}
		return 0
	})
	return entries, lines, nil
}

// valid reports whether e is an entry this package writes.
func (e journalEntry) valid() bool {
	switch e.Op {
	case opPut:
		return e.Key != "" && e.Rec != nil && e.Rec.Username != ""
	case opDelete:
		return e.Key != ""
	case opDeleteUser:
		return e.User != ""
	}
	return false
}

// journalFile is the open journal.
type journalFile struct {
	f     *os.File
	lines int // lines in the file, for deciding when to fold it
}

// openJournal opens (creating, mode 0600) the journal for appending.
func openJournal(path string, lines int) (*journalFile, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("session: open session journal: %w", err)
	}
	return &journalFile{f: f, lines: lines}, nil
}

// append writes entries as lines and syncs them to disk.
func (j *journalFile) append(entries ...journalEntry) error {
	var buf bytes.Buffer
	for _, e := range entries {
		line, err := json.Marshal(e)
		if err != nil {
			return fmt.Errorf("session: encode session journal: %w", err)
		}
		buf.Write(line)
		buf.WriteByte('\n')
	}
	if _, err := j.f.Write(buf.Bytes()); err != nil {
		return fmt.Errorf("session: write session journal: %w", err)
	}
	if err := j.f.Sync(); err != nil {
		return fmt.Errorf("session: write session journal: %w", err)
	}
	j.lines += len(entries)
	return nil
}

// reset empties the journal once the session file holds everything in it.
func (j *journalFile) reset() error {
	if err := j.f.Truncate(0); err != nil {
		return fmt.Errorf("session: empty session journal: %w", err)
	}
	if err := j.f.Sync(); err != nil {
		return fmt.Errorf("session: empty session journal: %w", err)
	}
	j.lines = 0
	return nil
}

func (j *journalFile) close() error { return j.f.Close() }
