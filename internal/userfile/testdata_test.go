package userfile

import (
	"path/filepath"
	"testing"

	"golang.org/x/crypto/bcrypt"
)

// TestParseThirdPartyFiles parses user files written by Apache's htpasswd
// and by Python's bcrypt (see testdata/README.md) and checks that a password
// of each verifies against the hash read, at the files' cost of 12.
func TestParseThirdPartyFiles(t *testing.T) {
	tests := []struct {
		file       string
		names      []string
		prefix     string
		user, pass string
	}{
		{"htpasswd-users.txt", []string{"alice", "bob"}, "$2y$12$", "bob", "bob htpasswd pw"},
		{"python-users.txt", []string{"carol", "dave"}, "$2b$12$", "carol", "carol-python-pw"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			entries, err := ParseFile(filepath.Join("testdata", tt.file), true)
			if err != nil {
				t.Fatalf("ParseFile: %v", err)
			}
			if len(entries) != len(tt.names) {
				t.Fatalf("got %d users, want %d", len(entries), len(tt.names))
			}
			for i, e := range entries {
				if e.Name != tt.names[i] || e.Hash[:7] != tt.prefix {
					t.Errorf("entry %d: user %q hash prefix %q, want %q %q", i, e.Name, e.Hash[:7], tt.names[i], tt.prefix)
				}
				if e.Name == tt.user {
					if err := bcrypt.CompareHashAndPassword([]byte(e.Hash), []byte(tt.pass)); err != nil {
						t.Errorf("password of %s does not verify: %v", e.Name, err)
					}
				}
			}
		})
	}
}
