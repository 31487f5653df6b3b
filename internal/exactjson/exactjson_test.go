package exactjson

import (
	stdjson "encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
)

// account is the shape of a user-information answer.
type account struct {
	Email    string `json:"email"`
	Verified *bool  `json:"email_verified"`
	Nested   struct {
		Primary bool `json:"primary"`
	} `json:"nested"`
}

func TestDecode(t *testing.T) {
	tests := []struct {
		name   string
		in     string
		want   string // the e-mail read
		member string // the duplicate refused; "" when none
		object string
		bad    bool // malformed, not ambiguous
	}{
		{"exact", `{"email":"alice@example.com","email_verified":true}`, "alice@example.com", "", "", false},
		{"a letter-case variant is another member", `{"email":"eve@evil.com","Email":"alice@example.com"}`, "eve@evil.com", "", "", false},
		{"only a variant", `{"EMAIL":"alice@example.com"}`, "", "", "", false},
		{"Kelvin sign and long s are other names", `{"email":"eve@evil.com","emaiſ":"x","\u212a":"y"}`, "eve@evil.com", "", "", false},
		{"duplicate", `{"email":"eve@evil.com","email":"alice@example.com"}`, "", "email", "", false},
		{"duplicate of an ignored member", `{"email":"a@example.com","x":1,"x":2}`, "", "x", "", false},
		{"duplicate in a nested object", `{"email":"a@example.com","nested":{"primary":false,"primary":true}}`, "", "primary", "/nested", false},
		{"duplicate deep in an ignored value", `{"other":[{"a":{"b":1,"b":2}}]}`, "", "b", "/other/0/a", false},
		{"duplicate spelt with an escape", `{"email":"x@example.com","\u0065mail":"y@example.com"}`, "", "email", "", false},
		{"invalid UTF-8", "{\"email\":\"a\xffb@example.com\"}", "", "", "", true},
		{"two values", `{"email":"a@example.com"} {}`, "", "", "", true},
		{"wrong type", `{"email":17}`, "", "", "", true},
		{"truncated", `{"email":"a@`, "", "", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got account
			err := Decode([]byte(tt.in), &got)
			var amb *Error
			switch {
			case tt.member != "":
				if !errors.As(err, &amb) || amb.Member != tt.member || amb.Object != tt.object || amb.Variant {
					t.Fatalf("Decode = %v (%#v), want the duplicate %q in %q", err, amb, tt.member, tt.object)
				}
				if !strings.Contains(err.Error(), `"`+tt.member+`" given twice`) {
					t.Errorf("message %q does not name the member", err)
				}
			case tt.bad:
				if err == nil || errors.As(err, &amb) || !strings.Contains(err.Error(), "malformed JSON") {
					t.Fatalf("Decode = %v, want a malformed-JSON error", err)
				}
			default:
				if err != nil || got.Email != tt.want {
					t.Fatalf("Decode = %v, email %q; want %q", err, got.Email, tt.want)
				}
			}
		})
	}
}

// flex is a boolean sent as true or "true", decoded by its own method.
type flex bool

func (f *flex) UnmarshalJSON(b []byte) error {
	switch string(b) {
	case "true", `"true"`:
		*f = true
	case "false", `"false"`:
		*f = false
	default:
		return errors.New("neither true nor false")
	}
	return nil
}

// TestDecodeKeepsMethodsAndRaw: a type's own UnmarshalJSON is used, and a
// member kept raw (jsontext.Value) decodes again later.
func TestDecodeKeepsMethodsAndRaw(t *testing.T) {
	var v struct {
		Verified *flex                     `json:"email_verified"`
		All      map[string]jsontext.Value `json:"claims"`
	}
	if err := Decode([]byte(`{"email_verified":"true","claims":{"groups":["a","b"]}}`), &v); err != nil {
		t.Fatal(err)
	}
	if v.Verified == nil || !*v.Verified {
		t.Errorf("email_verified = %v", v.Verified)
	}
	var groups []string
	if err := Decode(v.All["groups"], &groups); err != nil || !reflect.DeepEqual(groups, []string{"a", "b"}) {
		t.Errorf("groups = %v, %v", groups, err)
	}
	if err := Decode([]byte(`{"email_verified":"yes"}`), &v); err == nil {
		t.Error(`"yes" accepted as a boolean`)
	}
}

func TestCheckRead(t *testing.T) {
	names := []string{"sub", "iss", "kid", "keys"}
	tests := []struct {
		name   string
		in     string
		member string // "" when accepted
		of     string
		object string
	}{
		{"exact names", `{"sub":"a","iss":"b","email":"c","Email":"d"}`, "", "", ""},
		{"variant of a name read", `{"sub":"a","Sub":"b"}`, "Sub", "sub", ""},
		{"variant alone", `{"SUB":"b"}`, "SUB", "sub", ""},
		{"Kelvin sign", `{"keys":[{"\u212aid":"x"}]}`, "\u212aid", "kid", "/keys/0"},
		{"dotless capital I with dot", `{"İss":"x"}`, "İss", "iss", ""},
		{"variant in a nested object", `{"keys":[{"kid":"a"},{"KID":"b"}]}`, "KID", "kid", "/keys/1"},
		{"duplicate of a name not read", `{"sub":"a","x":1,"x":2}`, "x", "", ""},
		{"a value that looks like a name", `{"sub":"Sub","a":["SUB"]}`, "", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckRead([]byte(tt.in), names...)
			if tt.member == "" {
				if err != nil {
					t.Fatalf("CheckRead = %v, want nil", err)
				}
				return
			}
			var amb *Error
			if !errors.As(err, &amb) || amb.Member != tt.member || amb.Of != tt.of || amb.Object != tt.object || amb.Variant != (tt.of != "") {
				t.Fatalf("CheckRead = %v (%#v), want member %q of %q in %q", err, amb, tt.member, tt.of, tt.object)
			}
		})
	}
	if err := CheckRead([]byte(`{"sub":`), names...); err == nil {
		t.Error("a truncated document passed")
	}
}

// readBy is a type encoding/json decodes, with the names given to
// CheckRead in FuzzCheckRead.
type readBy struct {
	Sub  string `json:"sub"`
	Kid  string `json:"kid"`
	Keys []struct {
		Kid string `json:"kid"`
		K   string `json:"k"`
	} `json:"keys"`
}

var readByNames = []string{"sub", "kid", "keys", "k"}

// FuzzCheckRead: whenever CheckRead accepts a document, encoding/json
// reads from it exactly what Decode reads; and Decode never accepts a
// document with a duplicate name that CheckRead refuses for it.
func FuzzCheckRead(f *testing.F) {
	for _, s := range []string{
		`{"sub":"a","kid":"b","keys":[{"kid":"c","k":"d"}]}`,
		`{"sub":"a","Sub":"b"}`,
		`{"sub":"a","sub":"b"}`,
		`{"keys":[{"\u212aid":"x","K":"y"}]}`,
		`{"ſub":"x"}`,
		`{"İd":"x","kid":"y"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checked := CheckRead(data, readByNames...)
		var exact readBy
		decoded := Decode(data, &exact)
		var amb *Error
		if errors.As(decoded, &amb) && checked == nil {
			t.Fatalf("Decode refused a duplicate (%v) that CheckRead accepted", decoded)
		}
		if checked != nil || decoded != nil {
			return
		}
		var loose readBy
		if err := stdjson.Unmarshal(data, &loose); err != nil {
			return // a type encoding/json refuses and v2 accepts: nothing read
		}
		if !reflect.DeepEqual(loose, exact) {
			t.Fatalf("encoding/json read %+v, Decode %+v, from %q", loose, exact, data)
		}
	})
}
