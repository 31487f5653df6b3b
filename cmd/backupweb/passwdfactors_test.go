package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/factors"
)

// factorsFor writes alice's TOTP secret, a passkey named Laptop and ten
// recovery codes, and bob's TOTP, into the factors file at path.
func factorsFor(t *testing.T, path string) {
	t.Helper()
	keys, err := factors.NewKeys([]byte(testFactorSecret))
	if err != nil {
		t.Fatal(err)
	}
	err = factors.Edit(path, keys, func(d *factors.Doc) error {
		for _, user := range []string{"alice", "bob"} {
			rec, err := d.GetOrNew(user)
			if err != nil {
				return err
			}
			rec.TOTP = &factors.TOTP{Sealed: keys.SealTOTP(user, "JBSWY3DPEHPK3PXP"), Added: time.Now().UTC()}
			if user == "alice" {
				_, rec.Recovery = keys.NewRecoveryCodes(user)
				rec.Passkeys = []factors.Passkey{{Name: "Laptop", Created: time.Now().UTC(), ID: []byte{1, 2}, Credential: json.RawMessage(`{}`)}}
			}
			if err := d.Put(rec); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestUserPasswdFactors: `user passwd` says on standard error which
// second factors the user has, without the secret key, and leaves them;
// -reset-factors removes them all (the user's only, a broken record
// included) after the password changed.
func TestUserPasswdFactors(t *testing.T) {
	const users = "alice:" + testHashA + "\nbob:" + testHashB + "\n"
	for _, tt := range []struct {
		name     string
		factors  string // "": none; "good", "broken": alice's line broken
		flags    []string
		stderr   []string
		aliceHas bool // alice still has factors afterwards
	}{
		{"no factors file", "", nil, []string{`user "alice" has no second factor`, "does not exist"}, false},
		{"factors kept", "good", nil, []string{`user "alice" keeps these second factors`, "TOTP", `1 passkey ("Laptop")`, "10 recovery codes", "-reset-factors"}, true},
		{"factors removed", "good", []string{"-reset-factors"}, []string{`removed every second factor of user "alice"`, "TOTP", `1 passkey ("Laptop")`}, false},
		{"broken record kept", "broken", nil, []string{"a record that cannot be read", "-reset-factors"}, true},
		{"broken record removed", "broken", []string{"-reset-factors"}, []string{`removed every second factor of user "alice"`}, false},
		{"another factors file", "elsewhere", []string{"-reset-factors"}, []string{`removed every second factor of user "alice"`}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := userFile(t, users)
			fpath := factors.DefaultPath(path)
			flags := tt.flags
			switch tt.factors {
			case "good":
				factorsFor(t, fpath)
			case "broken":
				factorsFor(t, fpath)
				b, _ := os.ReadFile(fpath)
				b = []byte(strings.Replace(string(b), `alice:{`, `alice:{"totp":`, 1))
				os.WriteFile(fpath, b, 0o600)
			case "elsewhere":
				fpath = filepath.Join(t.TempDir(), "other.factors")
				factorsFor(t, fpath)
				flags = append(flags, "-factors", fpath)
			}
			before := hashOf(t, path, "alice")
			args := append([]string{"passwd", "-file", path, "-cost", "4"}, flags...)
			code, stdout, stderr := runUserCmd("n3w-pass\n", append(args, "alice")...)
			if code != exitOK || stdout != "" {
				t.Fatalf("exit %d, stdout %q, stderr %s", code, stdout, stderr)
			}
			if hashOf(t, path, "alice") == before {
				t.Error("the password did not change")
			}
			for _, w := range tt.stderr {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr %q lacks %q", stderr, w)
				}
			}
			if tt.factors == "" {
				if _, err := os.Stat(fpath); !os.IsNotExist(err) {
					t.Errorf("a factors file was made: %v", err)
				}
				return
			}
			text, err := os.ReadFile(fpath)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Contains(string(text), "\nalice:"); got != tt.aliceHas {
				t.Errorf("alice's line there: %v, want %v\n%s", got, tt.aliceHas, text)
			}
			if !strings.Contains(string(text), "\nbob:{") {
				t.Errorf("bob's factors went too:\n%s", text)
			}
		})
	}
}

// TestUserResetFactorsOnlyForPasswd: -reset-factors belongs to passwd.
func TestUserResetFactorsOnlyForPasswd(t *testing.T) {
	path := userFile(t, "alice:"+testHashA+"\n")
	code, _, stderr := runUserCmd("", "del", "-file", path, "-reset-factors", "alice")
	if code != exitUsage || !strings.Contains(stderr, "-reset-factors applies to passwd only") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
	if hashOf(t, path, "alice") != testHashA {
		t.Error("the file changed")
	}
}
