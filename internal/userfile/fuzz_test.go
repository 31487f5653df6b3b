package userfile

import (
	"bytes"
	"errors"
	"regexp"
	"strings"
	"testing"
)

// fuzzName is the file name FuzzParse passes to Parse.
const fuzzName = "fuzz.txt"

// problemShape is what every problem message must look like: the file, an
// optional line number, then fixed text in which only numbers vary.
var problemShape = regexp.MustCompile(`^fuzz\.txt(:[0-9]+)?: (.*)$`)

// fixedMessages are the problem texts Parse may produce, numbers replaced
// by N. A message ending in "…" may continue with a reason from package
// password, which the echo check covers.
func fixedMessages() []string {
	msgs := []string{
		ErrMalformed.Error(),
		"invalid user name: it is empty",
		"invalid user name: it is not valid UTF-8",
		"invalid user name: it is longer than N bytes",
		"invalid user name: it starts with '#', which marks a comment line",
		"invalid user name: it contains ':', the field separator",
		"invalid user name: it contains whitespace",
		"invalid user name: it contains a control character",
		"invalid user name: it contains an invisible formatting character",
		"empty password value",
		"duplicate user name (first defined on line N)",
		"no users defined",
		"file larger than N MiB",
		"N more problems not shown",
		"unsupported password value: whitespace between ':' and the bcrypt hash",
		"unsupported password value: an unknown kind of hash; " + supported,
		"unsupported password value: not a hash (a plain password?) but use_bcrypt is on; " + supported,
		"unsupported password value: malformed bcrypt hash: …",
		ErrHashWithoutBcrypt.Error(),
	}
	for _, h := range foreignHashes {
		msgs = append(msgs, "unsupported password value: "+h.what+"; "+supported)
	}
	for i, m := range msgs {
		msgs[i] = digits.ReplaceAllString(m, "N")
	}
	return msgs
}

var digits = regexp.MustCompile(`[0-9]+`)

func FuzzParse(f *testing.F) {
	f.Add([]byte("alice:"+hashA+"\n"), true)
	f.Add([]byte("\ufeff# c\r\nalice:"+hashA+"\r\nbob:"+hashY), true)
	f.Add([]byte("alice:s3cret\nalice:other\n:x\nno colon\n"), false)
	f.Add([]byte("bob:$apr1$hy9W5Tvu$fMVgjWNLQR0B1srp2.6Sa1\ncarol:{SHA}GpHWL3ymc5liWkNopqtdSjuqYHM=\n"), true)
	f.Add([]byte("dave:$2b$99$"+hashA[7:]+"\neve: "+hashB+"\n"), true)

	msgs := fixedMessages()
	vocabulary := fuzzName + "\n" + strings.Join(msgs, "\n")
	f.Fuzz(func(t *testing.T, data []byte, bcrypt bool) {
		entries, err := Parse(fuzzName, bytes.NewReader(data), bcrypt)
		if err == nil {
			seen := make(map[string]bool)
			for _, e := range entries {
				if ValidName(e.Name) != nil || e.Hash == "" || seen[e.Name] || e.Line < 1 {
					t.Fatalf("bad entry %+v", e)
				}
				seen[e.Name] = true
			}
			if len(entries) == 0 {
				t.Fatal("no entries and no error")
			}
			return
		}
		if entries != nil {
			t.Fatalf("entries %+v returned with an error", entries)
		}
		for _, p := range problems(err) {
			var le *LineError
			if !errors.As(p, &le) {
				t.Fatalf("problem %q is not a *LineError", p)
			}
			checkProblem(t, p.Error(), msgs)
			for _, line := range strings.Split(string(data), "\n") {
				_, value, ok := strings.Cut(line, ":")
				value = strings.TrimSpace(value)
				if ok && len(value) >= 8 && strings.Contains(p.Error(), value) && !strings.Contains(vocabulary, value) {
					t.Fatalf("problem %q echoes a value", p)
				}
			}
		}
	})
}

// checkProblem fails unless msg is one of the fixed problem texts.
func checkProblem(t *testing.T, msg string, fixed []string) {
	t.Helper()
	m := problemShape.FindStringSubmatch(msg)
	if m == nil {
		t.Fatalf("problem %q does not start with the file name", msg)
	}
	text := digits.ReplaceAllString(m[2], "N")
	for _, f := range fixed {
		if prefix, open := strings.CutSuffix(f, "…"); open && strings.HasPrefix(text, prefix) || text == f {
			return
		}
	}
	t.Fatalf("problem %q is not a known message", msg)
}
