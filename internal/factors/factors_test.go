package factors

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var testSecret = []byte("0123456789abcdef0123456789abcdef0123456789abcdef")

func testKeys(t testing.TB) *Keys {
	t.Helper()
	k, err := NewKeys(testSecret)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// line returns a good record line for user with a TOTP secret.
func line(t testing.TB, k *Keys, user string) string {
	t.Helper()
	d := &Doc{}
	rec := &Record{User: user, TOTP: &TOTP{Sealed: k.SealTOTP(user, "JBSWY3DPEHPK3PXP"), Added: time.Unix(1e9, 0).UTC()}, Handle: NewHandle()}
	if err := d.Put(rec); err != nil {
		t.Fatal(err)
	}
	b, err := d.bytes()
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return lines[len(lines)-1]
}

func TestParse(t *testing.T) {
	k := testKeys(t)
	other, _ := NewKeys([]byte(strings.Repeat("z", 40)))
	alice, bob := line(t, k, "alice"), line(t, k, "bob")
	swapped := "bob" + strings.TrimPrefix(alice, "alice") // alice's sealed secret on bob's line
	cases := []struct {
		name       string
		text       string
		keys       *Keys
		want       map[string]Status
		errLines   []string
		wantErrNil bool
	}{
		{"empty", "", k, map[string]Status{"alice": None}, nil, true},
		{"comments", "# hello\n\n  \n", k, map[string]Status{"alice": None}, nil, true},
		{"two users", alice + "\n" + bob + "\n", k, map[string]Status{"alice": Enrolled, "bob": Enrolled, "carol": None}, nil, true},
		{"crlf and bom", "\ufeff" + alice + "\r\n", k, map[string]Status{"alice": Enrolled}, nil, true},
		{"handle only", `carol:{"handle":"AAAAAAAAAAAAAAAAAAAAAA=="}`, k, map[string]Status{"carol": None}, nil, true},
		{"broken json", alice + "\n" + "bob:{\"totp\":\n", k, map[string]Status{"alice": Enrolled, "bob": Broken, "carol": None}, []string{":2: user bob:"}, false},
		{"truncated edit", alice[:len(alice)-10] + "\n" + bob, k, map[string]Status{"alice": Broken, "bob": Enrolled}, []string{":1: user alice:"}, false},
		{"no name", alice + "\n{\"totp\":{}}\n", k, map[string]Status{"alice": Enrolled, "bob": Broken, "carol": Broken}, []string{":2:"}, false},
		{"bad name", alice + "\nbad name:{}\n", k, map[string]Status{"alice": Enrolled, "carol": Broken}, []string{":2:"}, false},
		{"duplicate", alice + "\n" + alice + "\n", k, map[string]Status{"alice": Broken}, []string{":2: user alice: the user has a record on an earlier line"}, false},
		{"wrong key", alice, other, map[string]Status{"alice": Broken, "bob": None}, []string{"does not decrypt"}, false},
		{"moved secret", swapped, k, map[string]Status{"bob": Broken}, []string{"does not decrypt"}, false},
		{"unknown field", `alice:{"totpp":{}}`, k, map[string]Status{"alice": Broken}, []string{"unknown field"}, false},
		{"trailing text", alice + " x", k, map[string]Status{"alice": Broken}, []string{"text after"}, false},
		{"totp without secret", `alice:{"totp":{"added":"2020-01-01T00:00:00Z"}}`, k, map[string]Status{"alice": Broken}, []string{"no secret"}, false},
		{"bad recovery hash", `alice:{"recovery":["x"]}`, k, map[string]Status{"alice": Broken}, []string{"recovery code hash 1"}, false},
		{"passkey without handle", `alice:{"passkeys":[{"name":"a","id":"AQ==","credential":{}}]}`, k, map[string]Status{"alice": Broken}, []string{"without a passkey user handle"}, false},
		{"passkey without credential", `alice:{"handle":"AAAAAAAAAAAAAAAAAAAAAA==","passkeys":[{"name":"a","id":"AQ=="}]}`, k, map[string]Status{"alice": Broken}, []string{"no credential"}, false},
		{"passkey", `alice:{"handle":"AAAAAAAAAAAAAAAAAAAAAA==","passkeys":[{"name":"a","id":"AQ==","credential":{"x":1}}]}`, k, map[string]Status{"alice": Enrolled}, nil, true},
		{"shared handle", `alice:{"handle":"AAAAAAAAAAAAAAAAAAAAAA=="}` + "\n" + `bob:{"handle":"AAAAAAAAAAAAAAAAAAAAAA=="}`, k, map[string]Status{"alice": Broken, "bob": Broken}, []string{"handle is also user alice's"}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			set, err := Parse("F", strings.NewReader(c.text), c.keys)
			if (err == nil) != c.wantErrNil {
				t.Fatalf("err = %v, want nil: %v", err, c.wantErrNil)
			}
			for _, want := range c.errLines {
				if !strings.Contains(err.Error(), "F"+want) && !strings.Contains(err.Error(), want) {
					t.Errorf("err = %v, want it to contain %q", err, want)
				}
			}
			if err != nil && strings.Contains(err.Error(), "v1.") {
				t.Errorf("err quotes the line's content: %v", err)
			}
			users := map[string]bool{"alice": true, "bob": true, "carol": true}
			for user, want := range c.want {
				if _, got := set.LookupAmong(user, func(n string) bool { return users[n] }); got != want {
					t.Errorf("Lookup(%s) = %v, want %v", user, got, want)
				}
			}
		})
	}
}

func TestReadMissingAndUnreadable(t *testing.T) {
	dir := t.TempDir()
	set, err := Read(filepath.Join(dir, "none"), testKeys(t))
	if err != nil {
		t.Fatal(err)
	}
	if _, st := set.Lookup("alice"); st != None {
		t.Errorf("missing file: %v, want none", st)
	}
	// A directory where the file should be cannot be read: every user is
	// Broken, never None.
	set, err = Read(dir, testKeys(t))
	if err == nil {
		t.Fatal("reading a directory: no error")
	}
	if _, st := set.Lookup("alice"); st != Broken {
		t.Errorf("unreadable file: %v, want broken", st)
	}
	big := filepath.Join(dir, "big")
	os.WriteFile(big, make([]byte, MaxSize+1), 0o600)
	if set, err = Read(big, nil); err == nil || func() bool { _, st := set.Lookup("x"); return st != Broken }() {
		t.Errorf("oversized file: err %v", err)
	}
}

func TestEditKeepsBrokenLinesAndMode(t *testing.T) {
	k := testKeys(t)
	path := filepath.Join(t.TempDir(), "users.factors")
	broken := "bob:{\"totp\":"
	if err := os.WriteFile(path, []byte(line(t, k, "alice")+"\n"+broken+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := Edit(path, k, func(d *Doc) error {
		rec, err := d.GetOrNew("carol")
		if err != nil {
			return err
		}
		_, rec.Recovery = k.NewRecoveryCodes("carol")
		return d.Put(rec)
	})
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	if !strings.Contains(string(data), "\n"+broken+"\n") {
		t.Errorf("the broken line was lost:\n%s", data)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", fi.Mode().Perm())
	}
	// Changing the broken user is refused; resetting them is not.
	err = Edit(path, k, func(d *Doc) error {
		_, err := d.GetOrNew("bob")
		return err
	})
	if !errors.Is(err, ErrBrokenRecord) {
		t.Errorf("editing a broken user: %v, want ErrBrokenRecord", err)
	}
	if err := Edit(path, k, func(d *Doc) error {
		if !d.Delete("bob") {
			t.Error("Delete(bob) found nothing")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	set, err := Read(path, k)
	if err != nil {
		t.Fatal(err)
	}
	for user, want := range map[string]Status{"alice": Enrolled, "bob": None, "carol": None} {
		if _, got := set.Lookup(user); got != want {
			t.Errorf("%s: %v, want %v", user, got, want)
		}
	}
	if rec, _ := set.Lookup("carol"); rec == nil || len(rec.Recovery) != RecoveryCount {
		t.Errorf("carol's recovery codes: %+v", rec)
	}
}

func TestEditErrorLeavesFile(t *testing.T) {
	k := testKeys(t)
	path := filepath.Join(t.TempDir(), "f")
	os.WriteFile(path, []byte(line(t, k, "alice")+"\n"), 0o600)
	before, _ := os.ReadFile(path)
	boom := errors.New("boom")
	if err := Edit(path, k, func(d *Doc) error { d.Delete("alice"); return boom }); !errors.Is(err, boom) {
		t.Fatalf("err %v", err)
	}
	// A failed write (atomicfile's own tests fail its rename) leaves the
	// file as it was: here the folder cannot take a temporary file.
	if os.Geteuid() != 0 {
		os.Chmod(filepath.Dir(path), 0o500)
		defer os.Chmod(filepath.Dir(path), 0o700)
		if err := Edit(path, k, func(d *Doc) error { d.Delete("alice"); return nil }); err == nil {
			t.Fatal("a failed write: no error")
		}
	}
	after, _ := os.ReadFile(path)
	if string(after) != string(before) {
		t.Error("the file changed")
	}
	if m, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".f.tmp-*")); len(m) != 0 {
		t.Errorf("temporary files left: %v", m)
	}
}

func TestStoreReloads(t *testing.T) {
	k := testKeys(t)
	path := filepath.Join(t.TempDir(), "f")
	s := Open(path, k, nil)
	if _, st := s.Lookup("alice"); st != None {
		t.Fatalf("empty: %v", st)
	}
	var handle []byte
	if err := s.Edit(func(d *Doc) error {
		rec, _ := d.GetOrNew("alice")
		handle = rec.Handle
		rec.Passkeys = []Passkey{{Name: "key", ID: []byte{1, 2}, Credential: []byte(`{"count":1}`), Created: time.Now()}}
		return d.Put(rec)
	}); err != nil {
		t.Fatal(err)
	}
	if u, ok := s.Set().ByHandle(handle); !ok || u != "alice" {
		t.Errorf("ByHandle = %q %v", u, ok)
	}
	// An edit by hand that breaks the line: Poll sees it, alice is Broken.
	os.WriteFile(path, []byte("alice:{oops\n"), 0o600)
	s.Poll()
	if _, st := s.Lookup("alice"); st != Broken {
		t.Errorf("after a broken edit: %v, want broken", st)
	}
	os.Remove(path)
	s.Reload()
	if _, st := s.Lookup("alice"); st != None {
		t.Errorf("after removal: %v, want none", st)
	}
}

func TestSealAndRecovery(t *testing.T) {
	k := testKeys(t)
	sealed := k.SealTOTP("alice", "SECRET")
	if strings.Contains(sealed, "SECRET") {
		t.Fatal("the secret shows through")
	}
	if got, err := k.OpenTOTP("alice", sealed); err != nil || got != "SECRET" {
		t.Fatalf("OpenTOTP = %q, %v", got, err)
	}
	for _, bad := range []string{"", "v1.", "v2.abc", "v1.!!!", sealed[:len(sealed)-2] + "AA"} {
		if _, err := k.OpenTOTP("alice", bad); err == nil {
			t.Errorf("OpenTOTP(%q): no error", bad)
		}
	}
	codes, hashes := k.NewRecoveryCodes("alice")
	seen := map[string]bool{}
	for i, c := range codes {
		if len(c) != 19 || seen[c] {
			t.Errorf("code %q", c)
		}
		seen[c] = true
		if k.MatchRecovery("alice", strings.ReplaceAll(strings.ToLower(c), "-", " "), hashes) != i {
			t.Errorf("code %d does not match as typed loosely", i)
		}
	}
	if _, err := NewKeys([]byte("short")); err == nil {
		t.Error("a short secret was accepted")
	}
}
