package oauth

import (
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/backupweb/backupweb/internal/exactjson"
)

// duplicateName reports whether an object of the JSON document data, at
// any depth, names a member twice, by walking encoding/json's tokens: an
// oracle independent of exactjson. ok is false when data is not JSON.
func duplicateName(data []byte) (dup, ok bool) {
	d := json.NewDecoder(strings.NewReader(string(data)))
	type level struct {
		object bool
		names  map[string]bool
		key    bool // the next string is a member name
	}
	var stack []*level
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return false, len(stack) == 0
		}
		if err != nil {
			return false, false
		}
		var top *level
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if s, isString := tok.(string); isString && top != nil && top.object && top.key {
			if top.names[s] {
				return true, true
			}
			top.names[s], top.key = true, false
			continue
		}
		if top != nil && top.object {
			top.key = true // a value was read (or begins): a name comes next
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &level{object: true, names: map[string]bool{}, key: true})
		case json.Delim('['):
			stack = append(stack, &level{})
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
			if len(stack) > 0 && stack[len(stack)-1].object {
				stack[len(stack)-1].key = true
			}
		}
	}
}

// FuzzDecodeClaims: decodeClaims never reads a document that names a
// member twice (the oracle above finds the duplicate whenever it reads
// the document), and what it reads is the value of the exactly named
// members (email, email_verified as true or "true", hd, sub), as a map,
// whose keys encoding/json keeps exact, holds them.
func FuzzDecodeClaims(f *testing.F) {
	for _, s := range []string{
		`{"sub":"1","email":"alice@example.com","email_verified":true,"hd":"example.com"}`,
		`{"email":"eve@evil.com","email_verified":true,"Email":"alice@example.com"}`,
		`{"EMAIL":"alice@example.com","email_verified":true}`,
		`{"email":"alice@example.com","email_verified":false,"Email_verified":true}`,
		`{"email":"alice@example.com","email_verified":"true","HD":"example.com"}`,
		`{"email":"eve@evil.com","email":"alice@example.com"}`,
		`{"email":"a@example.com","address":{"country":"x","country":"y"}}`,
		`{"email":"a@example.com","\u0065mail":"b@example.com"}`,
		`{"emaiſ":"a@example.com","\u212aey":"x"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		id, _, err := decodeClaims(data)
		dup, ok := duplicateName(data)
		if _, amb := errors.AsType[*exactjson.Error](err); amb && ok && !dup {
			t.Fatalf("refused as ambiguous a document without a duplicate: %v", err)
		}
		if err != nil {
			return
		}
		if !ok || dup {
			t.Fatalf("read a document that is not JSON or names a member twice (ok %v, duplicate %v): %q", ok, dup, data)
		}
		var m map[string]any
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatalf("encoding/json cannot read what decodeClaims read: %v", err)
		}
		str := func(k string) string { s, _ := m[k].(string); return s }
		if id.Email != str("email") || id.HostedDomain != str("hd") || id.Subject != str("sub") {
			t.Fatalf("read email %q hd %q sub %q from %q", id.Email, id.HostedDomain, id.Subject, data)
		}
		want := verifiedUnknown
		switch m["email_verified"] {
		case true, "true":
			want = verifiedYes
		case false, "false":
			want = verifiedNo
		}
		if id.Verified != want {
			t.Fatalf("verified %v, want %v, from %q", id.Verified, want, data)
		}
	})
}
