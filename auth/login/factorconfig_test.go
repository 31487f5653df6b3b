package login

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/backupweb/backupweb/factors"
)

func TestLoadSecondFactor(t *testing.T) {
	dir := t.TempDir()
	users := filepath.Join(dir, "users")
	writeFile(t, users, usersText(t, "alice", "bob"))
	custom := filepath.Join(dir, "custom.factors")
	broken := filepath.Join(dir, "broken.factors")
	os.WriteFile(broken, []byte("alice:{\"totp\":\n"), 0o600)
	open := filepath.Join(dir, "open.factors")
	os.WriteFile(open, []byte("# none yet\n"), 0o644)
	tests := []struct {
		name     string
		body     string
		ok       bool
		mode     SecondFactor
		file     string
		problems []string
	}{
		{"default off", "", true, SecondFactorOff, users + factors.Suffix, nil},
		{"off", "second_factor = off\n", true, SecondFactorOff, users + factors.Suffix, nil},
		{"optional", "second_factor = optional\n", true, SecondFactorOptional, users + factors.Suffix, nil},
		{"required, any case", "second_factor = Required\n", true, SecondFactorRequired, users + factors.Suffix, nil},
		{"bad value", "second_factor = yes\n", false, SecondFactorOff, "", []string{"second_factor: must be off, optional or required"}},
		{"factors_file", "second_factor = optional\nfactors_file = " + custom + "\n", true, SecondFactorOptional, custom, nil},
		{"broken line warns", "second_factor = optional\nfactors_file = " + broken + "\n", true, SecondFactorOptional, broken, []string{broken + ":1", "cannot sign in until the line is fixed"}},
		{"readable by others warns", "second_factor = required\nfactors_file = " + open + "\n", true, SecondFactorRequired, open, []string{open}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, ok, problems := loadSection(t, "users_file = "+users+"\nuse_bcrypt = True\n"+tt.body)
			if ok != tt.ok {
				t.Fatalf("ok = %v, want %v: %v", ok, tt.ok, problems)
			}
			var all []string
			for _, p := range problems {
				all = append(all, p.String())
			}
			text := strings.Join(all, "\n")
			for _, want := range tt.problems {
				if !strings.Contains(text, want) {
					t.Errorf("no problem mentioning %q:\n%s", want, text)
				}
			}
			if !tt.ok {
				return
			}
			if cfg.SecondFactor != tt.mode || cfg.withDefaults().FactorsFile != tt.file {
				t.Errorf("mode %v file %q, want %v %q", cfg.SecondFactor, cfg.withDefaults().FactorsFile, tt.mode, tt.file)
			}
		})
	}
}
