// Package exactjson decodes what an outside party sends (an identity
// provider's answers, ID token claims, discovery documents, key sets) by
// the exact names of its members, and refuses an object that names a
// member twice, at any depth.
//
// encoding/json matches a member to a field without regard to letter case
// ("Email" and "EMAIL" fill the field of "email"; so do "ſ" for "s" and
// the Kelvin sign for "k") and keeps the last of duplicate members. Where a
// member's value decides who someone is, either lets whoever can add a
// member choose what is read. RFC 7519 section 4 wants a JWT whose claims
// name a member twice rejected, and I-JSON (RFC 7493) forbids such
// objects; member names are compared as written.
//
// Decode is the one way the service reads such a document: it uses the
// semantics of encoding/json/v2 (github.com/go-json-experiment/json, the
// module that package grew from, with its default options): names matched
// exactly, a duplicate name refused, text that is not valid UTF-8 refused,
// members no field names ignored. CheckRead is for a document that a
// library decodes with encoding/json itself (go-oidc's key set, its ID
// token checks): it refuses what would make that library read something
// other than Decode would.
//
// The package does not decide what a refusal means for a sign-in: callers
// recognise an ambiguous document by *Error and answer as their contract
// says.
package exactjson

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Error is an ambiguous document: an object that names a member twice, or
// (CheckRead) a member whose name differs only in letter case from a name
// the decoding library reads. Other problems (not JSON, a value of the
// wrong type) are plain errors.
type Error struct {
	// Member is the member name refused, as the document spells it.
	Member string
	// Object is the JSON Pointer (RFC 6901) of the object holding it; ""
	// for the top level.
	Object string
	// Variant is set for a letter-case variant of Of (CheckRead); unset,
	// Member is given twice.
	Variant bool
	// Of is the name read that Member is a variant of.
	Of string
}

func (e *Error) Error() string {
	where := "the top-level object"
	if e.Object != "" {
		where = "the object at " + quote(e.Object)
	}
	if e.Variant {
		return fmt.Sprintf("exactjson: member %s of %s differs from %s only in letter case", quote(e.Member), where, quote(e.Of))
	}
	return fmt.Sprintf("exactjson: member %s given twice in %s", quote(e.Member), where)
}

// maxQuoted bounds a name as messages show it.
const maxQuoted = 64

// quote shows a name from a document in a message: quoted with Go's
// escapes (no control character reaches a log), at most maxQuoted bytes.
func quote(s string) string {
	if len(s) > maxQuoted {
		s = strings.ToValidUTF8(s[:maxQuoted], "") + "..."
	}
	return strconv.Quote(s)
}

// Decode decodes the JSON document data into v (a pointer), matching
// object members to struct fields by their exact names. It fails with
// *Error when an object names a member twice, at any depth (in members v
// has no field for too), and with another error when data is not one
// well-formed JSON value in UTF-8 or does not fit v. Members v has no
// field for are ignored. To keep a member for later, decode it into a
// jsontext.Value and decode that with Decode again.
func Decode(data []byte, v any) error {
	if err := json.Unmarshal(data, v); err != nil {
		return describe(err)
	}
	return nil
}

// describe turns a decoding error into *Error for a duplicate name, or an
// error naming where the document is malformed.
func describe(err error) error {
	var syn *jsontext.SyntacticError
	if errors.As(err, &syn) && errors.Is(syn.Err, jsontext.ErrDuplicateName) {
		return &Error{Member: syn.JSONPointer.LastToken(), Object: string(syn.JSONPointer.Parent())}
	}
	return fmt.Errorf("exactjson: malformed JSON: %w", err)
}

// CheckRead reports whether a library that decodes data with encoding/json
// (which matches names ignoring letter case and keeps the last of
// duplicates) reads the same as Decode would, given names, every member
// name the library's types read at any depth. It fails with *Error when an
// object names a member twice, or holds a member whose name is not one of
// names but matches one of them as encoding/json matches names, and with
// another error when data is not one well-formed JSON value in UTF-8.
func CheckRead(data []byte, names ...string) error {
	if err := Decode(data, new(jsontext.Value)); err != nil {
		return err
	}
	d := jsontext.NewDecoder(bytes.NewReader(data))
	for {
		tok, err := d.ReadToken()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return describe(err)
		}
		depth := d.StackDepth()
		if kind, n := d.StackIndex(depth); tok.Kind() != '"' || kind != '{' || n%2 != 1 {
			continue
		}
		name := tok.String()
		if slices.Contains(names, name) {
			continue
		}
		for _, read := range names {
			if foldsTo(name, read) {
				return &Error{Member: name, Object: string(d.StackPointer().Parent()), Variant: true, Of: read}
			}
		}
	}
}

// foldsTo reports whether encoding/json, or strings.EqualFold, would take
// name for read: equal once each rune is folded as encoding/json folds it
// (upper case of lower case, so that "İ" matches "i"), or equal under
// Unicode's simple folding.
func foldsTo(name, read string) bool {
	return strings.EqualFold(name, read) || fold(name) == fold(read)
}

// fold is encoding/json's folding of a member name: each rune becomes the
// upper case of its lower case.
func fold(s string) string {
	var b strings.Builder
	for _, r := range s {
		b.WriteRune(unicode.ToUpper(unicode.ToLower(r)))
	}
	return b.String()
}
