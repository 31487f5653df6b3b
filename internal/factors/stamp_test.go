package factors

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"sync"
	"testing"
)

// TestStamp: the stamp changes with the factors (TOTP, passkeys), not
// with what a sign-in or a spent recovery code changes.
func TestStamp(t *testing.T) {
	base := func() *Record {
		return &Record{User: "alice", TOTP: &TOTP{Sealed: "v1.a"}, Recovery: []string{"h1", "h2"}, Handle: []byte("h"),
			Passkeys: []Passkey{{Name: "Key", ID: []byte{1}, Credential: json.RawMessage(`{"n":1}`)}}}
	}
	if s := (*Record)(nil).Stamp(); s != "" {
		t.Errorf("no record: %q", s)
	}
	if s := (&Record{User: "alice", Recovery: []string{"h"}, Handle: []byte("h")}).Stamp(); s != "" {
		t.Errorf("no factor: %q", s)
	}
	same := map[string]func(*Record){
		"a recovery code spent": func(r *Record) { r.Recovery = r.Recovery[1:] },
		"a passkey used":        func(r *Record) { r.Passkeys[0].Credential = json.RawMessage(`{"n":2}`) },
		"a passkey renamed":     func(r *Record) { r.Passkeys[0].Name = "Other" },
	}
	changed := map[string]func(*Record){
		"totp removed":     func(r *Record) { r.TOTP = nil },
		"totp replaced":    func(r *Record) { r.TOTP = &TOTP{Sealed: "v1.b"} },
		"a passkey added":  func(r *Record) { r.Passkeys = append(r.Passkeys, Passkey{ID: []byte{2}}) },
		"a passkey gone":   func(r *Record) { r.Passkeys = nil },
		"another passkey":  func(r *Record) { r.Passkeys[0].ID = []byte{3} },
		"ids run together": func(r *Record) { r.Passkeys = []Passkey{{ID: []byte{}}, {ID: []byte{1}}} },
	}
	want := base().Stamp()
	for name, change := range same {
		r := base()
		change(r)
		if r.Stamp() != want {
			t.Errorf("%s changed the stamp", name)
		}
	}
	for name, change := range changed {
		r := base()
		change(r)
		if r.Stamp() == want {
			t.Errorf("%s left the stamp as it was", name)
		}
	}
}

// TestCheckStampUnderLock: twenty enrolments begun with the same stamp
// finish at once; CheckStamp inside Edit lets exactly one through.
func TestCheckStampUnderLock(t *testing.T) {
	keys := testKeys(t)
	path := filepath.Join(t.TempDir(), "users.factors")
	for round, kind := range []string{"totp", "passkey"} {
		var wg sync.WaitGroup
		errs := make([]error, 20)
		since := ""
		if round > 0 {
			rec, _ := mustReadSet(t, path, keys).Lookup("alice")
			since = rec.Stamp()
		}
		for i := range errs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = Edit(path, keys, func(d *Doc) error {
					if err := d.CheckStamp("alice", since); err != nil {
						return err
					}
					rec, err := d.GetOrNew("alice")
					if err != nil {
						return err
					}
					if kind == "totp" {
						rec.TOTP = &TOTP{Sealed: keys.SealTOTP("alice", "JBSWY3DPEHPK3PXP")}
					} else {
						rec.Passkeys = append(rec.Passkeys, Passkey{Name: "Key", ID: []byte{byte(i)}, Credential: json.RawMessage(`{}`)})
					}
					return d.Put(rec)
				})
			}()
		}
		wg.Wait()
		stored := 0
		for _, err := range errs {
			switch {
			case err == nil:
				stored++
			case !errors.Is(err, ErrChanged):
				t.Fatalf("%s: %v", kind, err)
			}
		}
		if stored != 1 {
			t.Errorf("%s: %d of 20 stored, want 1", kind, stored)
		}
	}
	rec, _ := mustReadSet(t, path, keys).Lookup("alice")
	if rec == nil || rec.TOTP == nil || len(rec.Passkeys) != 1 {
		t.Errorf("stored %+v, want TOTP and one passkey", rec)
	}
}

func mustReadSet(t *testing.T, path string, keys *Keys) *Set {
	t.Helper()
	s, err := Read(path, keys)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
