package factors

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/secretkey"
)

var (
	oldSecret   = bytes.Repeat([]byte("o"), 40)
	newSecret   = bytes.Repeat([]byte("n"), 40)
	otherSecret = bytes.Repeat([]byte("x"), 40)
)

func keyring(t *testing.T, cur, prev []byte) *Keys {
	t.Helper()
	k, err := secretkey.New(cur, prev)
	if err != nil {
		t.Fatal(err)
	}
	keys, err := NewKeyring(k)
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

// TestKeyringReadsPrevious: what the previous key sealed opens and
// matches, what is sealed now is under the current key alone, and what
// neither key made is refused.
func TestKeyringReadsPrevious(t *testing.T) {
	old := keyring(t, oldSecret, nil)
	rolled := keyring(t, newSecret, oldSecret)
	current := keyring(t, newSecret, nil)
	other := keyring(t, otherSecret, nil)

	sealed := old.SealTOTP("alice", "JBSWY3DPEHPK3PXP")
	codes, hashes := old.NewRecoveryCodes("alice")
	keyed := old.HashRecovery("alice", codes[1])

	tests := []struct {
		name     string
		k        *Keys
		wantOpen bool
	}{
		{"previous key held", rolled, true},
		{"previous key dropped", current, false},
		{"neither key", other, false},
		{"the old key itself", old, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.k.OpenTOTP("alice", sealed)
			if tt.wantOpen != (err == nil) {
				t.Fatalf("OpenTOTP: %q, %v", got, err)
			}
			if err == nil && got != "JBSWY3DPEHPK3PXP" {
				t.Fatalf("OpenTOTP: %q", got)
			}
			if err != nil && !errors.Is(err, ErrDecrypt) {
				t.Fatalf("OpenTOTP: %v, want ErrDecrypt", err)
			}
			if i := tt.k.MatchRecovery("alice", codes[3], hashes); (i == 3) != tt.wantOpen || (i >= 0 && i != 3) {
				t.Fatalf("MatchRecovery of a sealed code: %d", i)
			}
			if i := tt.k.MatchRecovery("alice", codes[1], []string{keyed}); (i == 0) != tt.wantOpen {
				t.Fatalf("MatchRecovery of a keyed code: %d", i)
			}
		})
	}
	fresh := rolled.SealTOTP("alice", "JBSWY3DPEHPK3PXP")
	if _, err := old.OpenTOTP("alice", fresh); err == nil {
		t.Fatal("a secret sealed now opens under the previous key")
	}
	_, freshHashes := rolled.NewRecoveryCodes("alice")
	if _, _, err := old.openRecovery("alice", freshHashes[0]); err == nil {
		t.Fatal("a recovery code made now opens under the previous key")
	}
}

// TestResealFile: rotate-secret's step for the factors file. Everything
// of the previous key moves to the current one, a second run changes
// nothing, a line under neither key is kept and counted, and after it the
// previous key is not needed.
func TestResealFile(t *testing.T) {
	old := keyring(t, oldSecret, nil)
	other := keyring(t, otherSecret, nil)
	path := filepath.Join(t.TempDir(), "users.factors")
	codes, hashes := old.NewRecoveryCodes("alice")
	stranger := &Record{User: "mallory", TOTP: &TOTP{Sealed: other.SealTOTP("mallory", "JBSWY3DPEHPK3PXP"), Added: time.Unix(0, 0).UTC()}}
	err := Edit(path, nil, func(d *Doc) error {
		if err := d.Put(&Record{User: "alice", TOTP: &TOTP{Sealed: old.SealTOTP("alice", "JBSWY3DPEHPK3PXP"), Added: time.Unix(0, 0).UTC()}, Recovery: hashes}); err != nil {
			return err
		}
		return d.Put(stranger)
	})
	if err != nil {
		t.Fatal(err)
	}
	rolled := keyring(t, newSecret, oldSecret)
	c, err := ResealFile(context.Background(), path, rolled)
	if err != nil {
		t.Fatal(err)
	}
	want := ResealCount{TOTPResealed: 1, RecoveryResealed: 10, Broken: 1}
	if c != want {
		t.Fatalf("first run: %+v, want %+v", c, want)
	}
	before, _ := os.ReadFile(path)
	if c, err = ResealFile(context.Background(), path, rolled); err != nil || c != (ResealCount{TOTPCurrent: 1, RecoveryCurrent: 10, Broken: 1}) {
		t.Fatalf("second run: %+v, %v", c, err)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Fatal("a second run changed the file")
	}
	if !bytes.Contains(before, []byte("mallory")) {
		t.Fatal("the line under neither key was dropped")
	}

	current := keyring(t, newSecret, nil)
	set, err := Read(path, current)
	if set == nil || err == nil || !errors.Is(err, ErrDecrypt) {
		// The line under neither key is reported, the others read.
		t.Fatalf("Read: %v", err)
	}
	rec, st := set.Lookup("alice")
	if st != Enrolled {
		t.Fatalf("alice after the previous key is dropped: %v", st)
	}
	if got, err := current.OpenTOTP("alice", rec.TOTP.Sealed); err != nil || got != "JBSWY3DPEHPK3PXP" {
		t.Fatalf("TOTP secret after the rotation: %q, %v", got, err)
	}
	if i := current.MatchRecovery("alice", codes[7], rec.Recovery); i != 7 {
		t.Fatalf("recovery code after the rotation: %d", i)
	}
	if _, st := set.Lookup("mallory"); st != Broken {
		t.Fatalf("a record under neither key reads as %v, want Broken", st)
	}
}
