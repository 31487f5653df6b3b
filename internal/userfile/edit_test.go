package userfile

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// writeFile creates a test file with the given content and mode.
func writeFile(t *testing.T, path, content string, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil { // WriteFile's mode is masked by the umask
		t.Fatal(err)
	}
}

// readFile returns a test file's content.
func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// editCase is one edit of a user file and the exact text it must produce.
type editCase struct {
	name   string
	before string
	edit   func(d *Doc) error
	after  string
}

// messy has every kind of line a Doc must keep untouched.
const messy = "# users of backupweb\r\n" +
	"\n" +
	"alice:" + hashA + "\n" +
	"  # indented comment  \n" +
	"not a user line\n" +
	"bad name:" + hashA + "\n" +
	"bob:" + hashB + "   \n" +
	"carol:plain\n"

func TestDocEdits(t *testing.T) {
	tests := []editCase{
		{"add to a missing file", "", func(d *Doc) error { return d.Add("alice", hashA) },
			"alice:" + hashA + "\n"},
		{"add keeps every line", messy, func(d *Doc) error { return d.Add("dave", hashY) },
			messy + "dave:" + hashY + "\n"},
		{"add after an unterminated last line", "# c\nalice:" + hashA, func(d *Doc) error { return d.Add("bob", hashB) },
			"# c\nalice:" + hashA + "\nbob:" + hashB + "\n"},
		{"add uses CRLF in a CRLF file", "alice:" + hashA + "\r\n", func(d *Doc) error { return d.Add("bob", hashB) },
			"alice:" + hashA + "\r\nbob:" + hashB + "\r\n"},
		{"add follows the last line end", "a:1\r\nb:2\n", func(d *Doc) error { return d.Add("c", "3") },
			"a:1\r\nb:2\nc:3\n"},
		{"add follows the last line end, CRLF", "a:1\nb:2\r\nc:3", func(d *Doc) error { return d.Add("d", "4") },
			"a:1\nb:2\r\nc:3\r\nd:4\r\n"},
		{"add keeps a byte order mark", "\ufeff# c\n", func(d *Doc) error { return d.Add("bob", hashB) },
			"\ufeff# c\nbob:" + hashB + "\n"},
		{"set replaces one line only", messy, func(d *Doc) error { return d.Set("bob", hashY) },
			strings.Replace(messy, "bob:"+hashB+"   \n", "bob:"+hashY+"\n", 1)},
		{"set keeps a CR", "alice:" + hashA + "\r\nbob:" + hashB + "\r\n", func(d *Doc) error { return d.Set("alice", hashY) },
			"alice:" + hashY + "\r\nbob:" + hashB + "\r\n"},
		{"set on an indented line", "  alice:" + hashA + "\n", func(d *Doc) error { return d.Set("alice", hashB) },
			"alice:" + hashB + "\n"},
		{"set fixes every duplicate", "alice:" + hashA + "\n#\nalice:" + hashB + "\n", func(d *Doc) error { return d.Set("alice", hashY) },
			"alice:" + hashY + "\n#\nalice:" + hashY + "\n"},
		{"delete removes one line only", messy, func(d *Doc) error { return d.Delete("alice") },
			strings.Replace(messy, "alice:"+hashA+"\n", "", 1)},
		{"delete every duplicate", "alice:" + hashA + "\nbob:" + hashB + "\nalice:" + hashY + "\n", func(d *Doc) error { return d.Delete("alice") },
			"bob:" + hashB + "\n"},
		{"delete the unterminated last line", "alice:" + hashA + "\nbob:" + hashB, func(d *Doc) error { return d.Delete("bob") },
			"alice:" + hashA + "\n"},
		{"delete the only line then add", "alice:" + hashA, func(d *Doc) error {
			if err := d.Delete("alice"); err != nil {
				return err
			}
			return d.Add("bob", hashB)
		}, "bob:" + hashB + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "users.txt")
			if tt.before != "" {
				writeFile(t, path, tt.before, 0o600)
			}
			d, err := Load(path)
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			if err := tt.edit(d); err != nil {
				t.Fatalf("edit: %v", err)
			}
			if err := d.Save(path); err != nil {
				t.Fatalf("Save: %v", err)
			}
			if got := readFile(t, path); got != tt.after {
				t.Errorf("file\n got %q\nwant %q", got, tt.after)
			}
		})
	}
}

func TestDocRefusals(t *testing.T) {
	tests := []struct {
		name string
		edit func(d *Doc) error
		want error // nil: any error
	}{
		{"add existing", func(d *Doc) error { return d.Add("alice", hashB) }, ErrExists},
		{"add invalid name", func(d *Doc) error { return d.Add("bad name", hashB) }, ErrInvalidName},
		{"add comment-like name", func(d *Doc) error { return d.Add("#dave", hashB) }, ErrInvalidName},
		{"add empty hash", func(d *Doc) error { return d.Add("dave", "") }, errEmptyValue},
		{"add hash with newline", func(d *Doc) error { return d.Add("dave", hashB+"\nmallory:x") }, nil},
		{"add hash with space", func(d *Doc) error { return d.Add("dave", " "+hashB) }, nil},
		{"set missing", func(d *Doc) error { return d.Set("dave", hashB) }, ErrNotFound},
		{"set name of a bad line", func(d *Doc) error { return d.Set("bad name", hashB) }, ErrNotFound},
		{"set empty name", func(d *Doc) error { return d.Set("", hashB) }, ErrNotFound},
		{"set hash with CR", func(d *Doc) error { return d.Set("alice", hashB+"\r") }, nil},
		{"delete missing", func(d *Doc) error { return d.Delete("dave") }, ErrNotFound},
		{"delete commented-out user", func(d *Doc) error { return d.Delete("#alice") }, ErrNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "users.txt")
			writeFile(t, path, messy, 0o600)
			d, err := Load(path)
			if err != nil {
				t.Fatal(err)
			}
			err = tt.edit(d)
			if err == nil || (tt.want != nil && !errors.Is(err, tt.want)) {
				t.Fatalf("error %v, want %v", err, tt.want)
			}
			if err := d.Save(path); err != nil {
				t.Fatal(err)
			}
			if got := readFile(t, path); got != messy {
				t.Errorf("a refused edit changed the file:\n%q", got)
			}
		})
	}
}

func TestDocNames(t *testing.T) {
	path := filepath.Join(t.TempDir(), "users.txt")
	writeFile(t, path, messy+"alice:"+hashB+"\n#dave:"+hashA+"\n", 0o600)
	d, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := d.Names(), []string{"alice", "bob", "carol"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Names = %q, want %q", got, want)
	}
	for name, want := range map[string]bool{"alice": true, "carol": true, "dave": false, "#dave": false, "bad name": false, "": false} {
		if got := d.Has(name); got != want {
			t.Errorf("Has(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	d, err := Load(filepath.Join(dir, "missing.txt"))
	if err != nil || len(d.Names()) != 0 {
		t.Errorf("missing file: %v, %v names; want an empty Doc", err, d)
	}
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), dir) {
		t.Errorf("directory: error %v, want one naming %s", err, dir)
	}
	if _, err := Load(filepath.Join(dir, "missing", "users.txt")); err != nil {
		t.Errorf("missing directory: %v, want an empty Doc (Save reports it)", err)
	}
}
