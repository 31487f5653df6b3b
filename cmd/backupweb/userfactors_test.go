package main

import (
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/factors"
)

const testFactorSecret = "0123456789abcdef0123456789abcdef0123456789abcdef"

// runFactorCmd runs `backupweb user` with BACKUP_SECRET_KEY set.
func runFactorCmd(t *testing.T, input string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	c, out, errs := bufferedCLI(strings.NewReader(input))
	c.lookupEnv = func(k string) (string, bool) {
		if k == "BACKUP_SECRET_KEY" {
			return testFactorSecret, true
		}
		return "", false
	}
	code = runUser(c, args)
	return code, out.String(), errs.String()
}

// codeFor returns a current code for the secret in an otpauth URI.
func codeFor(t *testing.T, uri string) string {
	t.Helper()
	u, err := url.Parse(strings.TrimSpace(uri))
	if err != nil || u.Scheme != "otpauth" || u.Host != "totp" {
		t.Fatalf("not an otpauth://totp URI: %q", uri)
	}
	code, err := factors.TOTPCode(u.Query().Get("secret"), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return code
}

// enrolPipe runs `user totp`, answering with the right code: the code is
// computed from the URI the command prints, so the command reads stdin
// through a pipe written once the URI is out.
func enrolPipe(t *testing.T, users, name string) (code int, stdout, stderr string) {
	t.Helper()
	return enrolPipeWith(t, testFactorSecret, users, name)
}

// enrolPipeWith is enrolPipe with secret as BACKUP_SECRET_KEY, and more
// flags of user totp before the name.
func enrolPipeWith(t *testing.T, secret, users, name string, more ...string) (code int, stdout, stderr string) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	out := &uriWriter{t: t, w: w}
	c, _, errs := bufferedCLI(r)
	c.stdout = out
	c.lookupEnv = func(k string) (string, bool) { return secret, k == "BACKUP_SECRET_KEY" }
	code = runUser(c, append(append([]string{"totp", "-file", users}, more...), name))
	w.Close()
	return code, out.b.String(), errs.String()
}

// uriWriter is standard output for enrolPipe: on the URI line it writes
// the matching code to the command's standard input.
type uriWriter struct {
	t *testing.T
	w *os.File
	b strings.Builder
}

func (u *uriWriter) Write(p []byte) (int, error) {
	u.b.Write(p)
	if strings.HasPrefix(string(p), "otpauth://") {
		u.w.WriteString(codeFor(u.t, string(p)) + "\n")
	}
	return len(p), nil
}

func TestUserTOTP(t *testing.T) {
	users := userFile(t, "alice:"+testHashA+"\nbob:"+testHashB+"\n")
	fpath := users + ".factors"

	// A wrong code: exit 1, nothing stored.
	code, stdout, stderr := runFactorCmd(t, "000000\n", "totp", "-file", users, "alice")
	if code != exitError || !strings.Contains(stderr, "wrong code; nothing was stored") {
		t.Fatalf("wrong code: exit %d stderr %q", code, stderr)
	}
	if lines := strings.Split(strings.TrimSpace(stdout), "\n"); len(lines) != 1 || !strings.HasPrefix(lines[0], "otpauth://totp/") || !strings.Contains(lines[0], "secret=") {
		t.Errorf("stdout %q, want one otpauth://totp/ line", stdout)
	}
	if _, err := os.Stat(fpath); err == nil {
		t.Fatal("a wrong code left a factors file")
	}
	if strings.ContainsAny(stderr, "█▀▄") {
		t.Error("a QR code was drawn on a standard error that is not a terminal")
	}

	// The right code: stored, sealed, mode 0600.
	code, stdout, stderr = enrolPipe(t, users, "alice")
	if code != exitOK {
		t.Fatalf("right code: exit %d stderr %q", code, stderr)
	}
	secret := func() string { u, _ := url.Parse(strings.TrimSpace(stdout)); return u.Query().Get("secret") }()
	data, err := os.ReadFile(fpath)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), secret) {
		t.Error("the factors file holds the secret in clear")
	}
	if fi, _ := os.Stat(fpath); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", fi.Mode().Perm())
	}
	keys, _ := factors.NewKeys([]byte(testFactorSecret))
	set, err := factors.Read(fpath, keys)
	if err != nil {
		t.Fatal(err)
	}
	rec, st := set.Lookup("alice")
	if st != factors.Enrolled {
		t.Fatalf("alice: %v", st)
	}
	if got, _ := keys.OpenTOTP("alice", rec.TOTP.Sealed); got != secret {
		t.Error("the stored secret is not the one printed")
	}
	if users2, _ := os.ReadFile(users); string(users2) != "alice:"+testHashA+"\nbob:"+testHashB+"\n" {
		t.Error("the user file changed")
	}

	// Enrolling again is refused; an unknown user too; no secret key too.
	if code, _, stderr := runFactorCmd(t, "", "totp", "-file", users, "alice"); code != exitError || !strings.Contains(stderr, "has TOTP already") {
		t.Errorf("again: exit %d %q", code, stderr)
	}
	if code, _, stderr := runFactorCmd(t, "", "totp", "-file", users, "carol"); code != exitError || !strings.Contains(stderr, `no user "carol"`) {
		t.Errorf("unknown user: exit %d %q", code, stderr)
	}
	if code, _, stderr := runUserCmd("", "totp", "-file", users, "alice"); code != exitError || !strings.Contains(stderr, "BACKUP_SECRET_KEY is not set") {
		t.Errorf("no key: exit %d %q", code, stderr)
	}

	// Recovery codes: ten, one a line, replacing the previous ones.
	code, first, _ := runFactorCmd(t, "", "recovery-codes", "-file", users, "alice")
	codes := strings.Fields(first)
	if code != exitOK || len(codes) != 10 {
		t.Fatalf("recovery-codes: exit %d, %d codes", code, len(codes))
	}
	_, second, _ := runFactorCmd(t, "", "recovery-codes", "-file", users, "alice")
	set, _ = factors.Read(fpath, keys)
	rec, _ = set.Lookup("alice")
	if keys.MatchRecovery("alice", codes[0], rec.Recovery) >= 0 {
		t.Error("an old recovery code still works")
	}
	if keys.MatchRecovery("alice", strings.Fields(second)[0], rec.Recovery) < 0 {
		t.Error("a new recovery code does not work")
	}

	// factors shows, -remove removes, -reset resets.
	if code, out, _ := runFactorCmd(t, "", "factors", "-file", users, "alice"); code != exitOK || !strings.Contains(out, "status: enrolled") || !strings.Contains(out, "recovery codes left: 10") {
		t.Errorf("factors: exit %d %q", code, out)
	}
	if code, _, stderr := runFactorCmd(t, "", "totp", "-remove", "-file", users, "alice"); code != exitOK {
		t.Fatalf("-remove: exit %d %q", code, stderr)
	}
	if _, st := mustRead(fpath, keys).Lookup("alice"); st != factors.None {
		t.Errorf("after -remove: %v", st)
	}
	enrolPipe(t, users, "bob")
	if code, _, stderr := runFactorCmd(t, "", "factors", "-reset", "-file", users, "bob"); code != exitOK || !strings.Contains(stderr, "removed every second factor") {
		t.Fatalf("-reset: exit %d %q", code, stderr)
	}
	if _, st := mustRead(fpath, keys).Lookup("bob"); st != factors.None {
		t.Errorf("after -reset: %v", st)
	}
}

func TestUserFactorsResetBrokenRecord(t *testing.T) {
	users := userFile(t, "alice:"+testHashA+"\nbob:"+testHashB+"\n")
	fpath := users + ".factors"
	os.WriteFile(fpath, []byte("alice:{\"totp\":\nbob:{\"handle\":\"AAAAAAAAAAAAAAAAAAAAAA==\"}\n"), 0o600)
	if code, _, stderr := runFactorCmd(t, "", "recovery-codes", "-file", users, "alice"); code != exitError || !strings.Contains(stderr, ":1:") {
		t.Errorf("changing a broken record: exit %d %q", code, stderr)
	}
	if code, _, stderr := runFactorCmd(t, "", "factors", "-file", users, "alice"); code != exitError || !strings.Contains(stderr, "cannot sign in") {
		t.Errorf("showing a broken record: exit %d %q", code, stderr)
	}
	if code, _, stderr := runFactorCmd(t, "", "factors", "-reset", "-file", users, "alice"); code != exitOK {
		t.Fatalf("reset: exit %d %q", code, stderr)
	}
	data, _ := os.ReadFile(fpath)
	if strings.Contains(string(data), "alice") || !strings.Contains(string(data), "bob:") {
		t.Errorf("after reset: %q", data)
	}
}

// mustRead reads the factors file, whatever its problems.
func mustRead(path string, keys *factors.Keys) *factors.Set {
	s, _ := factors.Read(path, keys)
	return s
}
