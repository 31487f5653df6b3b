package tokens

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/backupweb/backupweb/internal/atomicfile"
)

// Suffix is added to the user file's path to name the tokens file when
// tokens_file is not set.
const Suffix = ".tokens"

// DefaultPath returns the tokens file of a user file: its path + Suffix.
func DefaultPath(usersFile string) string { return usersFile + Suffix }

// fileMode is the mode the tokens file is always written with.
const fileMode fs.FileMode = 0o600

// maxSize bounds what is read of a tokens file.
const maxSize = 16 << 20

// maxLine bounds one line of a tokens file. A token within MaxLabel and
// MaxPath, whose every byte JSON escapes six-fold, stays well below it.
const maxLine = 64 << 10

// MaxLabel and MaxPath bound a token's label and path prefix, in bytes,
// wherever a token is made: the account page and `backupweb token add`.
const (
	MaxLabel = 80
	MaxPath  = 200
)

// CheckLabel refuses a label longer than MaxLabel bytes, or holding
// control characters or invalid UTF-8; the error names the limit.
func CheckLabel(label string) error {
	switch {
	case len(label) > MaxLabel:
		return fmt.Errorf("the label is %d bytes long; at most %d", len(label), MaxLabel)
	case !utf8.ValidString(label) || strings.ContainsFunc(label, func(c rune) bool { return c < 0x20 || c == 0x7f }):
		return errors.New("the label must be one line of text without control characters")
	}
	return nil
}

// CheckPath refuses a path prefix that does not start with "/", is longer
// than MaxPath bytes, or holds control characters or invalid UTF-8; the
// error names the limit.
func CheckPath(path string) error {
	switch {
	case !strings.HasPrefix(path, "/"):
		return errors.New("the path must start with /")
	case len(path) > MaxPath:
		return fmt.Errorf("the path is %d bytes long; at most %d", len(path), MaxPath)
	case !utf8.ValidString(path) || strings.ContainsFunc(path, func(c rune) bool { return c < 0x20 || c == 0x7f }):
		return errors.New("the path must be one line of text without control characters")
	}
	return nil
}

// header starts every file written.
const header = "# backupweb tokens file: one JSON object a line, only the hash of each token.\n" +
	"# Change it with `backupweb token add|revoke` or the account page; a line that does not parse refuses every token.\n"

// Parse reads a tokens file's text: blank lines and lines starting with
// "#" are skipped, every other line is one JSON token. Any line that is
// not a complete token, and a hash or id given twice, is an error naming
// the file and line; the file is then not used at all.
func Parse(path string, r io.Reader) ([]*Token, error) {
	var list []*Token
	ids, hashes := map[string]bool{}, map[string]bool{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), maxLine)
	n := 1
	for ; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		t, err := parseLine(line)
		switch {
		case err != nil:
			return nil, fmt.Errorf("tokens: %s:%d: %w", path, n, err)
		case ids[t.ID]:
			return nil, fmt.Errorf("tokens: %s:%d: the id %s is given twice", path, n, t.ID)
		case hashes[t.Hash]:
			return nil, fmt.Errorf("tokens: %s:%d: the same token hash is given twice", path, n)
		}
		ids[t.ID], hashes[t.Hash] = true, true
		list = append(list, t)
	}
	if err := sc.Err(); errors.Is(err, bufio.ErrTooLong) {
		return nil, fmt.Errorf("tokens: %s:%d: the line is longer than %d bytes", path, n, maxLine)
	} else if err != nil {
		return nil, fmt.Errorf("tokens: reading %s: %w", path, err)
	}
	return list, nil
}

// parseLine reads one token line. The error never quotes the line, which
// holds a hash.
func parseLine(line string) (*Token, error) {
	var t Token
	dec := json.NewDecoder(strings.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&t); err != nil || dec.More() {
		return nil, errors.New("not a token (one JSON object a line)")
	}
	h, err := hex.DecodeString(t.Hash)
	switch {
	case t.ID == "" || t.User == "" || t.Created.IsZero():
		return nil, errors.New("a token without id, user or created time")
	case err != nil || len(h) != len(Hash{}):
		return nil, errors.New("the hash is not 64 hexadecimal digits")
	case t.Path != "" && !strings.HasPrefix(t.Path, "/"):
		return nil, errors.New("the path does not start with /")
	}
	return &t, nil
}

// Read reads and parses the tokens file at path. A missing file holds no
// tokens.
func Read(path string) ([]*Token, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("tokens: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxSize+1))
	if err != nil {
		return nil, fmt.Errorf("tokens: reading %s: %w", path, err)
	}
	if len(data) > maxSize {
		return nil, fmt.Errorf("tokens: %s is larger than %d bytes", path, maxSize)
	}
	return Parse(path, bytes.NewReader(data))
}

// Doc is the tokens file being edited (see Edit).
type Doc struct {
	List []*Token
}

// Add appends t.
func (d *Doc) Add(t *Token) { d.List = append(d.List, t) }

// Revoke removes the token with id id and returns it, nil when there is
// none.
func (d *Doc) Revoke(id string) *Token {
	i := slices.IndexFunc(d.List, func(t *Token) bool { return t.ID == id })
	if i < 0 {
		return nil
	}
	t := d.List[i]
	d.List = slices.Delete(d.List, i, i+1)
	return t
}

// RevokeUser removes every token of user and returns them.
func (d *Doc) RevokeUser(user string) []*Token {
	var gone []*Token
	d.List = slices.DeleteFunc(d.List, func(t *Token) bool {
		if t.User == user {
			gone = append(gone, t)
			return true
		}
		return false
	})
	return gone
}

// bytes returns the file's new text.
func (d *Doc) bytes() ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(header)
	for _, t := range d.List {
		j, err := json.Marshal(t)
		if err != nil {
			return nil, fmt.Errorf("tokens: encoding token %s: %w", t.ID, err)
		}
		b.Write(j)
		b.WriteByte('\n')
	}
	return b.Bytes(), nil
}

// Edit changes the tokens file at path: under an exclusive lock (a
// ".lock" file beside it, flock) it reads the file, runs fn on it and,
// when fn returns nil, writes the result atomically (mode 0600, flushed,
// renamed over path). A file that does not parse is not edited: fix it by
// hand first, since rewriting it would drop what could not be read.
func Edit(path string, fn func(*Doc) error) error {
	return atomicfile.Edit(path, fileMode, func() ([]byte, error) {
		list, err := Read(path)
		if err != nil {
			return nil, err
		}
		d := &Doc{List: list}
		if err := fn(d); err != nil {
			return nil, err
		}
		return d.bytes()
	})
}
