package factors

import (
	"strings"
	"testing"
)

// FuzzParse checks that no input makes Parse panic, and that a line it
// could not read never leaves its user (or, for a line without a user,
// anyone without a record) as None.
func FuzzParse(f *testing.F) {
	k := testKeys(f)
	f.Add(line(f, k, "alice") + "\n")
	f.Add("bob:{\"totp\":\n")
	f.Add("# comment\n\n")
	f.Add(`carol:{"handle":"AAAAAAAAAAAAAAAAAAAAAA==","passkeys":[{"name":"a","id":"AQ==","credential":{}}]}`)
	f.Fuzz(func(t *testing.T, text string) {
		set, err := Parse("F", strings.NewReader(text), k)
		if set == nil {
			t.Fatal("nil set")
		}
		if err == nil {
			return
		}
		// Every line that failed names a user the service does not know,
		// or none: a user without a good record must not be None.
		if _, st := set.LookupAmong("zz-nobody", func(string) bool { return false }); st == None {
			t.Errorf("a broken file left a user as None: %v", err)
		}
	})
}
