package userfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"unicode"
)

// Errors of Doc's edits that callers branch on.
var (
	ErrExists   = errors.New("user already exists")
	ErrNotFound = errors.New("no such user")
)

// Doc is a user file held line by line for editing. Lines an edit does not
// touch (comments, blank lines, other users, even lines Parse would reject)
// are written back byte for byte, with their own line ends; a byte order
// mark is kept; a new line ends like the file's last line end, CRLF or LF.
//
// A Doc recognises a user line the way Parse does, but only when its name
// is valid; a name defined on several lines is edited on all of them.
// Doc does not check values against the use_bcrypt setting (it does not
// know it) and does not lock the file against concurrent editors. The zero
// Doc is an empty file.
type Doc struct {
	lines []string // without "\n"; the last one is what follows the final "\n"
	bom   bool     // the file started with a UTF-8 byte order mark
	crlf  bool     // new lines end with "\r\n"
}

// Load reads the user file at path for editing. A missing file gives an
// empty Doc, so that adding the first user creates the file; a path that
// cannot be read, or a file over MaxSize, is an error naming the path.
func Load(path string) (*Doc, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &Doc{}, nil
	}
	if err != nil {
		return nil, err // an *fs.PathError, which names the file
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxSize+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	if len(data) > MaxSize {
		return nil, &LineError{File: path, Err: ErrTooLarge}
	}
	d := &Doc{}
	d.lines, d.bom = splitLines(string(data))
	if n := len(d.lines); n > 1 {
		d.crlf = strings.HasSuffix(d.lines[n-2], "\r") // the last line with an end
	}
	return d, nil
}

// userAt returns the valid user name defined on line i, or "".
func (d *Doc) userAt(i int) string {
	kind, name, _ := splitLine(d.lines[i])
	if kind != lineUser || ValidName(name) != nil {
		return ""
	}
	return name
}

// Names returns the user names in file order, each once.
func (d *Doc) Names() []string {
	var names []string
	seen := make(map[string]bool)
	for i := range d.lines {
		if name := d.userAt(i); name != "" && !seen[name] {
			seen[name] = true
			names = append(names, name)
		}
	}
	return names
}

// Has reports whether a user called name is defined.
func (d *Doc) Has(name string) bool {
	if name == "" {
		return false
	}
	for i := range d.lines {
		if d.userAt(i) == name {
			return true
		}
	}
	return false
}

// Add appends a line for a new user. It fails with an error wrapping
// ErrInvalidName for a bad name, ErrExists when the name is taken, and
// refuses a hash that is empty or holds whitespace or control characters
// (which could break the line or add another).
func (d *Doc) Add(name, hash string) error {
	if err := ValidName(name); err != nil {
		return err
	}
	if err := checkStored(hash); err != nil {
		return err
	}
	if d.Has(name) {
		return ErrExists
	}
	cr := ""
	if d.crlf {
		cr = "\r"
	}
	if len(d.lines) == 0 {
		d.lines = []string{""} // the zero Doc
	}
	last := len(d.lines) - 1
	if d.lines[last] != "" {
		d.lines[last] += cr // end the unterminated last line first
		last++
		d.lines = append(d.lines, "")
	}
	d.lines[last] = name + ":" + hash + cr
	d.lines = append(d.lines, "")
	return nil
}

// Set replaces the password hash of an existing user, on every line that
// defines the name; it fails with ErrNotFound when there is none. Other
// lines are untouched.
func (d *Doc) Set(name, hash string) error {
	if err := checkStored(hash); err != nil {
		return err
	}
	found := false
	for i, raw := range d.lines {
		if name == "" || d.userAt(i) != name {
			continue
		}
		line := name + ":" + hash
		if strings.HasSuffix(raw, "\r") {
			line += "\r"
		}
		d.lines[i] = line
		found = true
	}
	if !found {
		return ErrNotFound
	}
	return nil
}

// Delete removes every line defining name; it fails with ErrNotFound when
// there is none. The line before a removed unterminated last line keeps its
// line end.
func (d *Doc) Delete(name string) error {
	if !d.Has(name) {
		return ErrNotFound
	}
	kept := make([]string, 0, len(d.lines))
	last := len(d.lines) - 1
	for i, raw := range d.lines {
		switch {
		case d.userAt(i) != name:
			kept = append(kept, raw)
		case i == last:
			kept = append(kept, "") // the file now ends with the previous line's "\n"
		}
	}
	d.lines = kept
	return nil
}

// WriteTo writes the file's text to w, as Save would store it.
func (d *Doc) WriteTo(w io.Writer) (int64, error) {
	text := strings.Join(d.lines, "\n")
	if d.bom {
		text = bom + text
	}
	n, err := io.WriteString(w, text)
	return int64(n), err
}

// checkStored refuses a value that cannot be stored on one line intact.
func checkStored(hash string) error {
	if hash == "" {
		return errEmptyValue
	}
	for _, r := range hash {
		if unicode.IsSpace(r) || unicode.IsControl(r) {
			return errors.New("password hash holds whitespace or a control character")
		}
	}
	return nil
}
