package userfile

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// Throwaway bcrypt hashes at cost 4, made with Python's bcrypt and htpasswd.
const (
	hashA = "$2b$04$XRTd2MQX.pV1qlg3Y5HZO.YqPfkMCb4I6rB0xpSYydEbIhHcQFMhy"
	hashB = "$2b$04$QgwesizPF/ILU2ywZHluzeOcByhJ/ciBI5k5Gz23smBRZEf87h1pG"
	hashY = "$2y$04$pHEkxzJ7IxMJo9Ze6J2aR.6mGkAkciMg18cjzAnOw5C9ijduFb1MO"
)

// problems splits the joined error Parse returns into its parts.
func problems(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

func TestParseAccepts(t *testing.T) {
	hashA2 := "$2a$" + hashA[4:]
	tests := []struct {
		name   string
		input  string
		bcrypt bool
		want   []Entry
	}{
		{"one user", "alice:" + hashA + "\n", true, []Entry{{"alice", hashA, 1}}},
		{"no final newline", "alice:" + hashA, true, []Entry{{"alice", hashA, 1}}},
		{"three bcrypt prefixes", "a:" + hashA2 + "\nb:" + hashB + "\ny:" + hashY + "\n", true,
			[]Entry{{"a", hashA2, 1}, {"b", hashB, 2}, {"y", hashY, 3}}},
		{"comments and blank lines", "# users\n\n   \n  # indented comment\nalice:" + hashA + "\n\n#bob:" + hashB + "\n", true,
			[]Entry{{"alice", hashA, 5}}},
		{"CRLF", "# c\r\nalice:" + hashA + "\r\nbob:" + hashB + "\r\n", true,
			[]Entry{{"alice", hashA, 2}, {"bob", hashB, 3}}},
		{"byte order mark", "\ufeffalice:" + hashA + "\n", true, []Entry{{"alice", hashA, 1}}},
		{"surrounding whitespace", "  alice:" + hashA + " \t\n", true, []Entry{{"alice", hashA, 1}}},
		{"unicode name", "émilie:" + hashA + "\n", true, []Entry{{"émilie", hashA, 1}}},
		{"plain password", "alice:s3cret\n", false, []Entry{{"alice", "s3cret", 1}}},
		{"plain password split at first colon", "alice:pa:ss:word\n", false, []Entry{{"alice", "pa:ss:word", 1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse("users.txt", strings.NewReader(tt.input), tt.bcrypt)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Parse = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestParseRefuses(t *testing.T) {
	tests := []struct {
		name   string
		input  string
		bcrypt bool
		kind   error  // every problem wraps it
		want   string // the first problem's message
	}{
		{"no colon", "alice " + hashA + "\n", true, ErrMalformed,
			"users.txt:1: malformed line: no ':' between user name and password"},
		{"empty name", "# c\n:" + hashA + "\n", true, ErrInvalidName,
			"users.txt:2: invalid user name: it is empty"},
		{"space in name", "al ice:" + hashA + "\n", true, ErrInvalidName,
			"users.txt:1: invalid user name: it contains whitespace"},
		{"space before colon", "alice :" + hashA + "\n", true, ErrInvalidName,
			"users.txt:1: invalid user name: it contains whitespace"},
		{"control character in name", "al\x01ice:" + hashA + "\n", true, ErrInvalidName,
			"users.txt:1: invalid user name: it contains a control character"},
		{"bidi override in name", "al\u202eice:" + hashA + "\n", true, ErrInvalidName,
			"users.txt:1: invalid user name: it contains an invisible formatting character"},
		{"name not UTF-8", "al\xffice:" + hashA + "\n", true, ErrInvalidName,
			"users.txt:1: invalid user name: it is not valid UTF-8"},
		{"name too long", strings.Repeat("n", 257) + ":" + hashA + "\n", true, ErrInvalidName,
			"users.txt:1: invalid user name: it is longer than 256 bytes"},
		{"empty value", "alice:\n", true, errEmptyValue,
			"users.txt:1: empty password value"},
		{"empty plain value", "alice:   \n", false, errEmptyValue,
			"users.txt:1: empty password value"},
		{"duplicate", "alice:" + hashA + "\n# c\nalice:" + hashB + "\n", true, ErrDuplicate,
			"users.txt:3: duplicate user name (first defined on line 1)"},
		{"duplicate in plain mode", "alice:one\nbob:two\nalice:three\n", false, ErrDuplicate,
			"users.txt:3: duplicate user name (first defined on line 1)"},
		{"plain password when bcrypt", "alice:s3cret\n", true, ErrUnsupportedHash,
			"users.txt:1: unsupported password value: not a hash (a plain password?) but use_bcrypt is on; " + supported},
		{"htpasswd MD5", "alice:$apr1$hy9W5Tvu$fMVgjWNLQR0B1srp2.6Sa1\n", true, ErrUnsupportedHash,
			"users.txt:1: unsupported password value: an htpasswd MD5 ($apr1$) hash; " + supported},
		{"htpasswd SHA", "alice:{SHA}GpHWL3ymc5liWkNopqtdSjuqYHM=\n", true, ErrUnsupportedHash,
			"users.txt:1: unsupported password value: an htpasswd SHA-1 ({SHA}) hash; " + supported},
		{"bcrypt 2x", "alice:$2x$" + hashA[4:] + "\n", true, ErrUnsupportedHash,
			"users.txt:1: unsupported password value: a bcrypt $2x$ hash (from a flawed old implementation); " + supported},
		{"SHA-512 crypt", "alice:$6$salt$digest\n", true, ErrUnsupportedHash,
			"users.txt:1: unsupported password value: a SHA-512-crypt ($6$) hash; " + supported},
		{"argon2", "alice:$argon2id$v=19$m=65536,t=3,p=4$c2FsdA$aGFzaA\n", true, ErrUnsupportedHash,
			"users.txt:1: unsupported password value: an Argon2 hash; " + supported},
		{"werkzeug", "alice:pbkdf2:sha256:600000$salt$digest\n", true, ErrUnsupportedHash,
			"users.txt:1: unsupported password value: a Werkzeug PBKDF2 hash; " + supported},
		{"unknown dollar hash", "alice:$9$whatever\n", true, ErrUnsupportedHash,
			"users.txt:1: unsupported password value: an unknown kind of hash; " + supported},
		{"truncated bcrypt", "alice:" + hashA[:59] + "\n", true, ErrUnsupportedHash,
			"users.txt:1: unsupported password value: malformed bcrypt hash: a bcrypt hash is exactly 60 characters long"},
		{"bcrypt cost too low", "alice:$2b$03$" + hashA[7:] + "\n", true, ErrUnsupportedHash,
			"users.txt:1: unsupported password value: malformed bcrypt hash: its cost 3 is outside 4 to 31"},
		{"space after colon", "alice: " + hashA + "\n", true, ErrUnsupportedHash,
			"users.txt:1: unsupported password value: whitespace between ':' and the bcrypt hash"},
		{"empty file", "", true, ErrNoUsers, "users.txt: no users defined"},
		{"only comments", "# nobody yet\n\n", false, ErrNoUsers, "users.txt: no users defined"},
		{"only a byte order mark", "\ufeff", true, ErrNoUsers, "users.txt: no users defined"},
		{"too large", strings.Repeat("#", MaxSize+1), true, ErrTooLarge, "users.txt: file larger than 16 MiB"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse("users.txt", strings.NewReader(tt.input), tt.bcrypt)
			if err == nil {
				t.Fatalf("Parse = %+v, want an error", got)
			}
			if got != nil {
				t.Errorf("Parse returned entries %+v with an error", got)
			}
			ps := problems(err)
			for _, p := range ps {
				if !errors.Is(p, tt.kind) {
					t.Errorf("problem %q is not %v", p, tt.kind)
				}
				var le *LineError
				if !errors.As(p, &le) || le.File != "users.txt" {
					t.Errorf("problem %q is not a *LineError naming users.txt", p)
				}
			}
			if ps[0].Error() != tt.want {
				t.Errorf("message\n got %q\nwant %q", ps[0].Error(), tt.want)
			}
		})
	}
}

func TestParseReportsEveryProblem(t *testing.T) {
	input := strings.Join([]string{
		"# header",
		"alice:" + hashA,
		"garbage line",
		"bob:$apr1$hy9W5Tvu$fMVgjWNLQR0B1srp2.6Sa1",
		"alice:" + hashB,
		":" + hashB,
		"carol:",
		"dave:" + hashY,
	}, "\n")
	_, err := Parse("users.txt", strings.NewReader(input), true)
	want := []struct {
		line int
		kind error
	}{{3, ErrMalformed}, {4, ErrUnsupportedHash}, {5, ErrDuplicate}, {6, ErrInvalidName}, {7, errEmptyValue}}
	ps := problems(err)
	if len(ps) != len(want) {
		t.Fatalf("got %d problems, want %d:\n%v", len(ps), len(want), err)
	}
	for i, w := range want {
		var le *LineError
		if !errors.As(ps[i], &le) || le.Line != w.line || !errors.Is(ps[i], w.kind) {
			t.Errorf("problem %d = %q, want line %d, %v", i, ps[i], w.line, w.kind)
		}
	}
	if got := strings.Count(err.Error(), "\n"); got != len(want)-1 {
		t.Errorf("joined message has %d line breaks, want one problem a line", got)
	}
}

func TestParseCapsProblems(t *testing.T) {
	input := strings.Repeat("no colon here\n", maxProblems+7)
	_, err := Parse("users.txt", strings.NewReader(input), false)
	ps := problems(err)
	if len(ps) != maxProblems+1 {
		t.Fatalf("got %d problems, want %d", len(ps), maxProblems+1)
	}
	if got, want := ps[maxProblems].Error(), "users.txt: 7 more problems not shown"; got != want {
		t.Errorf("last problem = %q, want %q", got, want)
	}
}

// TestParseNeverEchoesValues puts a marker in the value of every kind of bad
// line and checks that no message repeats it.
func TestParseNeverEchoesValues(t *testing.T) {
	const marker = "SECRETMARKER"
	lines := []string{
		"alice:" + marker,                       // plain password with bcrypt on
		"bob:$apr1$" + marker,                   // foreign hash
		"carol:$2b$12$" + marker,                // malformed bcrypt
		"dave:$" + marker,                       // unknown hash
		"eve:  " + marker + "x",                 // whitespace around a non-hash
		"al ice:" + marker,                      // invalid name
		"alice:" + marker + "dup",               // duplicate
		":" + marker,                            // empty name
		marker + " without a colon",             // malformed: the whole line may be a password
		"\x01:" + marker,                        // control character name
		strings.Repeat("x", 300) + ":" + marker, // long name
	}
	for _, bcrypt := range []bool{true, false} {
		_, err := Parse("users.txt", strings.NewReader(strings.Join(lines, "\n")), bcrypt)
		if err == nil {
			t.Fatalf("bcrypt=%v: no error", bcrypt)
		}
		if strings.Contains(err.Error(), marker) {
			t.Errorf("bcrypt=%v: message echoes a value:\n%v", bcrypt, err)
		}
	}
}

func TestParseFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "users.txt")
	if _, err := ParseFile(path, true); !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), path) {
		t.Errorf("missing file: error %v, want one naming %s and wrapping fs.ErrNotExist", err, path)
	}
	if _, err := ParseFile(dir, true); err == nil || !strings.Contains(err.Error(), dir) {
		t.Errorf("directory: error %v, want one naming %s", err, dir)
	}
	writeFile(t, path, "x:"+hashA+"\nx:"+hashB+"\n", 0o600)
	_, err := ParseFile(path, true)
	if want := fmt.Sprintf("%s:2: duplicate user name", path); err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("error %v, want it to start %q", err, want)
	}
}

func TestParseRefusesHashesWhenBcryptIsOff(t *testing.T) {
	_, err := Parse("users.txt", strings.NewReader("alice:"+hashA+"\nbob:plain\n"), false)
	if !errors.Is(err, ErrHashWithoutBcrypt) || !strings.Contains(err.Error(), "users.txt:1:") {
		t.Fatalf("a bcrypt hash with bcrypt off must be refused at its line, got %v", err)
	}
	if strings.Contains(err.Error(), hashA) {
		t.Fatal("the error echoes the hash")
	}
}
