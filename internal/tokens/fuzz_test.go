package tokens

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
)

// FuzzParse: no input makes Parse panic, and whatever it accepts comes
// back the same after a rewrite (Doc.bytes, as Edit writes it) and a
// second Parse. The seed corpus is in testdata/fuzz/FuzzParse.
func FuzzParse(f *testing.F) {
	h := strings.Repeat("ab", 32)
	f.Add("# header\n\n" + `{"id":"a1","user":"alice","created":"2026-11-27T10:00:00Z","hash":"` + h + `"}` + "\n")
	f.Add(`{"id":"a1","user":"alice","created":"2026-11-27T10:00:00Z","read_only":true,"path":"/backups/db/","hash":"` + h + `"}`)
	f.Add(`{"id":"a1","user":"alice","created":"2026-11-27T10:00:00Z","hash":"` + h + `","extra":1}`)
	f.Add(`{"id":"a1"}{"id":"a2"}`)
	f.Fuzz(func(t *testing.T, text string) {
		list, err := Parse("f", strings.NewReader(text))
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("an error of more than one line: %q", err)
			}
			return
		}
		out, err := (&Doc{List: list}).bytes()
		if err != nil {
			t.Fatalf("the accepted tokens do not encode: %v", err)
		}
		again, err := Parse("f", bytes.NewReader(out))
		if err != nil {
			t.Fatalf("the rewritten file does not parse: %v\n%s", err, out)
		}
		if len(again) != len(list) {
			t.Fatalf("%d tokens, %d after a rewrite", len(list), len(again))
		}
		for i := range list {
			a, b := *list[i], *again[i]
			if !a.Created.Equal(b.Created) || !a.Expires.Equal(b.Expires) || !a.LastUsed.Equal(b.LastUsed) {
				t.Fatalf("token %d's times changed in a rewrite: %+v, %+v", i, a, b)
			}
			a.Created, a.Expires, a.LastUsed = b.Created, b.Expires, b.LastUsed
			if !reflect.DeepEqual(a, b) {
				t.Fatalf("token %d changed in a rewrite: %+v, %+v", i, a, b)
			}
		}
	})
}
