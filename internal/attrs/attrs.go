// Package attrs holds the facts a sign-in records about its user beside
// the name ("email", "provider", when the password was given): a small
// map from names to values that cannot be changed once made.
//
// A session's attributes are authenticated with the rest of its record
// and reach every handler through the current user. Were they a plain
// map, each request would have to copy them, or hand handlers a map
// whose writes would change the stored, checked session in place. A Map
// has no method that writes: Of and With make new ones, so a Map can be
// shared by the store, the session manager and every handler, and
// copied as a value, without a copy of its contents.
//
// It deliberately offers no way to reach the map inside.
package attrs

import (
	"encoding/json"
	"iter"
	"maps"
	"slices"
)

// Map is a read-only map of attributes. The zero value is empty and
// ready to use. Values are safe for concurrent use.
type Map struct {
	m map[string]string // never written after the Map is made
}

// Of returns a Map of m's pairs. It copies m: later changes to m do not
// reach the Map.
func Of(m map[string]string) Map {
	if len(m) == 0 {
		return Map{}
	}
	return Map{m: maps.Clone(m)}
}

// With returns a Map of a's pairs with name set to value; a is not
// changed.
func (a Map) With(name, value string) Map {
	if len(a.m) == 0 {
		return Map{m: map[string]string{name: value}}
	}
	m := make(map[string]string, len(a.m)+1)
	maps.Copy(m, a.m)
	m[name] = value
	return Map{m: m}
}

// Without returns a Map of a's pairs but those of names; a itself when
// it holds none of them (no copy).
func (a Map) Without(names ...string) Map {
	if !slices.ContainsFunc(names, a.Has) {
		return a
	}
	m := maps.Clone(a.m)
	for _, n := range names {
		delete(m, n)
	}
	return Of(m)
}

// Get returns the value of name, or "" when a has none.
func (a Map) Get(name string) string { return a.m[name] }

// Lookup returns the value of name and whether a has it.
func (a Map) Lookup(name string) (string, bool) {
	v, ok := a.m[name]
	return v, ok
}

// Has reports whether a has name.
func (a Map) Has(name string) bool {
	_, ok := a.m[name]
	return ok
}

// Len returns how many pairs a holds.
func (a Map) Len() int { return len(a.m) }

// IsZero reports whether a is empty (json's omitzero).
func (a Map) IsZero() bool { return len(a.m) == 0 }

// All yields a's pairs in no particular order.
func (a Map) All() iter.Seq2[string, string] { return maps.All(a.m) }

// AppendNames appends a's names, sorted, to dst and returns the result:
// with room in dst, no allocation.
func (a Map) AppendNames(dst []string) []string {
	n := len(dst)
	for k := range a.m {
		dst = append(dst, k)
	}
	slices.Sort(dst[n:])
	return dst
}

// Clone returns a's pairs as a new map the caller owns (nil when a is
// empty).
func (a Map) Clone() map[string]string { return maps.Clone(a.m) }

// Equal reports whether a and b hold the same pairs.
func (a Map) Equal(b Map) bool { return maps.Equal(a.m, b.m) }

// String formats a as a map is formatted.
func (a Map) String() string {
	b, _ := json.Marshal(a.m)
	return string(b)
}

// MarshalJSON encodes a as a JSON object.
func (a Map) MarshalJSON() ([]byte, error) {
	if a.m == nil {
		return []byte("{}"), nil
	}
	return json.Marshal(a.m)
}

// UnmarshalJSON decodes a JSON object (or null) into a new Map: the
// Map a held before is not changed, only replaced.
func (a *Map) UnmarshalJSON(b []byte) error {
	var m map[string]string
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	if len(m) == 0 {
		m = nil
	}
	*a = Map{m: m}
	return nil
}
