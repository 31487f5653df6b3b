package attrs

import (
	"encoding/json"
	"reflect"
	"slices"
	"testing"
)

// TestNothingWrites: no method changes the Map it is called on or the
// map it was made from, and the only method with a pointer receiver,
// UnmarshalJSON, replaces the Map's contents without writing the map a
// copy of it shares. A method added that writes in place fails here.
func TestNothingWrites(t *testing.T) {
	src := map[string]string{"email": "a@example.org", "name": "A"}
	a := Of(src)
	src["email"] = "changed by the caller"
	shared := a // a copy of the value shares the same contents
	want := map[string]string{"email": "a@example.org", "name": "A"}

	_ = a.With("email", "mallory@example.org")
	_ = a.With("admin", "1")
	_ = a.Without("email")
	c := a.Clone()
	c["email"] = "changed through Clone"
	var b Map = a
	if err := json.Unmarshal([]byte(`{"email":"decoded@example.org"}`), &b); err != nil {
		t.Fatal(err)
	}
	if b.Get("email") != "decoded@example.org" {
		t.Fatalf("decoded %v", b)
	}
	for name, m := range map[string]Map{"a": a, "a's copy": shared} {
		if !plain(m).equal(want) {
			t.Errorf("%s is %v, want %v", name, m, want)
		}
	}

	// The methods a Map has: a new one must not write (add it here once
	// it is known not to).
	var names []string
	for i := range reflect.TypeFor[*Map]().NumMethod() {
		names = append(names, reflect.TypeFor[*Map]().Method(i).Name)
	}
	known := []string{"All", "AppendNames", "Clone", "Equal", "Get", "Has", "IsZero", "Len", "Lookup", "MarshalJSON", "String", "UnmarshalJSON", "With", "Without"}
	if !slices.Equal(names, known) {
		t.Errorf("methods %v, want %v: check that a new one writes nothing", names, known)
	}
	if n := reflect.TypeFor[Map]().NumField(); n != 1 || reflect.TypeFor[Map]().Field(0).IsExported() {
		t.Error("a Map's contents are reachable from outside the package")
	}
}

// plain is a Map read back as a plain map, for comparing.
type plain Map

func (m plain) equal(want map[string]string) bool {
	got := map[string]string{}
	for k, v := range Map(m).All() {
		got[k] = v
	}
	return reflect.DeepEqual(got, want)
}

func TestReadAndBuild(t *testing.T) {
	var zero Map
	if !zero.IsZero() || zero.Len() != 0 || zero.Get("x") != "" || zero.Has("x") || zero.Clone() != nil {
		t.Fatal("the zero Map is not empty")
	}
	if !Of(map[string]string{}).IsZero() {
		t.Error("a Map of an empty map is not the zero Map")
	}
	a := zero.With("b", "2").With("a", "1")
	if v, ok := a.Lookup("a"); !ok || v != "1" || a.Len() != 2 || !slices.Equal(a.AppendNames([]string{"x"}), []string{"x", "a", "b"}) {
		t.Fatalf("built %v", a)
	}
	if got := a.Without("a"); got.Has("a") || !got.Has("b") || !a.Has("a") {
		t.Errorf("Without: %v (from %v)", got, a)
	}
	if got := a.Without("absent"); !got.Equal(a) {
		t.Errorf("Without an absent name: %v", got)
	}
	if !a.Without("a", "b").IsZero() {
		t.Error("Without every name is not empty")
	}
}

func TestJSON(t *testing.T) {
	type rec struct {
		Attrs Map `json:"attrs,omitzero"`
	}
	for _, tc := range []struct {
		in   rec
		want string
	}{
		{rec{}, `{}`},
		{rec{Of(map[string]string{"email": "a@example.org"})}, `{"attrs":{"email":"a@example.org"}}`},
	} {
		b, err := json.Marshal(tc.in)
		if err != nil || string(b) != tc.want {
			t.Errorf("Marshal(%v) = %s, %v; want %s", tc.in, b, err, tc.want)
		}
		var back rec
		if err := json.Unmarshal(b, &back); err != nil || !back.Attrs.Equal(tc.in.Attrs) {
			t.Errorf("Unmarshal(%s) = %v, %v", b, back, err)
		}
	}
	// What older versions wrote: a plain object, or null.
	var r rec
	if err := json.Unmarshal([]byte(`{"attrs":null}`), &r); err != nil || !r.Attrs.IsZero() {
		t.Errorf("null: %v %v", r, err)
	}
	if err := json.Unmarshal([]byte(`{"attrs":["x"]}`), &r); err == nil {
		t.Error("a list read as attributes")
	}
}
