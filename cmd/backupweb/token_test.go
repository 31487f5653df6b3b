package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/backupweb/backupweb/internal/tokens"
)

// runTokenCmd runs `backupweb token` in-process.
func runTokenCmd(args ...string) (code int, stdout, stderr string) {
	c, out, errs := bufferedCLI(strings.NewReader(""))
	code = runToken(c, args)
	return code, out.String(), errs.String()
}

func TestTokenAddListRevoke(t *testing.T) {
	users := userFile(t, "alice:"+testHashA+"\nbob:"+testHashB+"\n")
	code, secret, stderr := runTokenCmd("add", "-file", users, "-label", "nightly fetch", "-expires", "90d", "-read-only", "-path", "/backups/db/", "alice")
	secret = strings.TrimSpace(secret)
	if code != exitOK || !tokens.Wellformed(secret) {
		t.Fatalf("add: exit %d stdout %q stderr %q", code, secret, stderr)
	}
	path := tokens.DefaultPath(users)
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("tokens file: %v %v", fi, err)
	}
	data, _ := os.ReadFile(path)
	if strings.Contains(string(data), secret) || strings.Contains(string(data), secret[4:]) {
		t.Fatal("the tokens file holds the token itself")
	}
	if code, _, _ := runTokenCmd("add", "-file", users, "bob"); code != exitOK {
		t.Fatal("add bob")
	}
	code, list, _ := runTokenCmd("list", "-file", users, "alice")
	if code != exitOK || !strings.Contains(list, "nightly fetch") || !strings.Contains(list, "read-only,path=/backups/db/") || strings.Contains(list, "bob") || strings.Contains(list, secret) {
		t.Fatalf("list alice: %q", list)
	}
	_, all, _ := runTokenCmd("list", "-file", users)
	if !strings.Contains(all, "bob") || !strings.Contains(all, "alice") {
		t.Fatalf("list: %q", all)
	}
	tok, st := tokens.Open(path, nil, nil).Lookup(secret)
	if st != tokens.Valid {
		t.Fatalf("lookup: %v", st)
	}
	if code, _, stderr := runTokenCmd("revoke", "-file", users, tok.ID); code != exitOK || !strings.Contains(stderr, "revoked token "+tok.ID) {
		t.Fatalf("revoke: %d %q", code, stderr)
	}
	if _, st := tokens.Open(path, nil, nil).Lookup(secret); st != tokens.Unknown {
		t.Fatalf("revoked token: %v", st)
	}
	if code, _, _ := runTokenCmd("revoke", "-file", users, tok.ID); code != exitError {
		t.Fatal("revoking twice succeeded")
	}
}

func TestTokenRefusals(t *testing.T) {
	users := userFile(t, "alice:"+testHashA+"\n")
	tests := []struct {
		args []string
		code int
	}{
		{nil, exitUsage},
		{[]string{"make"}, exitUsage},
		{[]string{"add", "alice"}, exitUsage},
		{[]string{"add", "-file", users}, exitUsage},
		{[]string{"add", "-file", users, "-expires", "soon", "alice"}, exitUsage},
		{[]string{"add", "-file", users, "-path", "backups", "alice"}, exitUsage},
		// The account page's limits: a label of at most 80 bytes, a
		// path of at most 200, one line each.
		{[]string{"add", "-file", users, "-label", strings.Repeat("<", tokens.MaxLabel+1), "alice"}, exitUsage},
		{[]string{"add", "-file", users, "-label", strings.Repeat("x", 11_000), "alice"}, exitUsage},
		{[]string{"add", "-file", users, "-label", "two\nlines", "alice"}, exitUsage},
		{[]string{"add", "-file", users, "-label", "tab\there", "alice"}, exitUsage},
		{[]string{"add", "-file", users, "-path", "/" + strings.Repeat("p", tokens.MaxPath), "alice"}, exitUsage},
		{[]string{"add", "-file", users, "-path", "/backups/\x7f", "alice"}, exitUsage},
		{[]string{"list", "-file", users, "-read-only"}, exitUsage},
		{[]string{"revoke", "-file", users}, exitUsage},
		{[]string{"add", "-file", users, "mallory"}, exitError},
		{[]string{"revoke", "-file", users, "0123"}, exitError},
	}
	for _, tt := range tests {
		code, out, stderr := runTokenCmd(tt.args...)
		if code != tt.code || out != "" {
			t.Errorf("token %q: exit %d stdout %q, want exit %d and nothing printed", tt.args, code, out, tt.code)
		}
		if strings.Contains(strings.Join(tt.args, " "), strings.Repeat("<", tokens.MaxLabel+1)) && !strings.Contains(stderr, "at most 80") {
			t.Errorf("the refusal does not name the limit: %q", stderr)
		}
	}
	// At the limits, the token is made, and the file still reads.
	label, path := strings.Repeat("<", tokens.MaxLabel), "/"+strings.Repeat("é", (tokens.MaxPath-1)/2)
	if code, _, stderr := runTokenCmd("add", "-file", users, "-label", label, "-path", path, "alice"); code != exitOK {
		t.Fatalf("add at the limits: %d %s", code, stderr)
	}
	if code, list, stderr := runTokenCmd("list", "-file", users); code != exitOK || !strings.Contains(list, label) {
		t.Fatalf("list: %d %s %s", code, list, stderr)
	}
}

func TestUserPasswdAndDelEndTokens(t *testing.T) {
	users := userFile(t, "alice:"+testHashA+"\nbob:"+testHashB+"\n")
	add := func(name string) string {
		_, s, _ := runTokenCmd("add", "-file", users, name)
		return strings.TrimSpace(s)
	}
	status := func(secret string) tokens.Status {
		_, st := tokens.Open(tokens.DefaultPath(users), nil, nil).Lookup(secret)
		return st
	}
	a1, b1 := add("alice"), add("bob")
	if code, _, stderr := runUserCmd("new\n", "passwd", "-file", users, "-cost", "4", "-keep-tokens", "alice"); code != exitOK || status(a1) != tokens.Valid {
		t.Fatalf("passwd -keep-tokens: %d %q, token %v", code, stderr, status(a1))
	}
	if code, _, stderr := runUserCmd("new\n", "passwd", "-file", users, "-cost", "4", "alice"); code != exitOK || status(a1) != tokens.Unknown || !strings.Contains(stderr, "revoked the 1 token(s)") {
		t.Fatalf("passwd: %d %q, token %v", code, stderr, status(a1))
	}
	if status(b1) != tokens.Valid {
		t.Fatal("bob's token ended with alice's")
	}
	if code, _, _ := runUserCmd("", "del", "-file", users, "bob"); code != exitOK || status(b1) != tokens.Unknown {
		t.Fatalf("del: %d, token %v", code, status(b1))
	}
	if code, _, _ := runUserCmd("", "del", "-file", users, "-keep-tokens", "alice"); code != exitUsage {
		t.Fatal("-keep-tokens accepted by del")
	}
}

// TestCheckConfigStopsOnABrokenTokensFile: a tokens file that does not
// parse (a line that is not a token, a line too long) is an error naming
// the file and line, and check-config exits 1.
func TestCheckConfigStopsOnABrokenTokensFile(t *testing.T) {
	dir := tokenSetup(t)
	newToken(t, dir, "alice")
	path := filepath.Join(dir, "backupweb.ini")
	if err := os.WriteFile(path, []byte(loginINI(dir, "")), 0o600); err != nil {
		t.Fatal(err)
	}
	check := func() (int, string) {
		c, _, stderr := testCLI(t.Context(), "", map[string]string{"BACKUP_SECRET_KEY": strings.Repeat("ab", 32)})
		return c.main([]string{"check-config", "-config", path}), stderr.String()
	}
	// Made beside the user file (no configuration named it then): the
	// check reads it there and says serve moves it; then moved.
	if code, out := check(); code != exitOK || !strings.Contains(out, "tokens_file: "+filepath.Join(dir, "users.tokens")+" is at its old default place; serve moves it to "+filepath.Join(dir, "state", "tokens")) {
		t.Fatalf("a tokens file at its old place: %d %s", code, out)
	}
	state := filepath.Join(dir, "state", "tokens")
	if err := os.MkdirAll(filepath.Dir(state), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(dir, "users.tokens"), state); err != nil {
		t.Fatal(err)
	}
	if code, out := check(); code != exitOK || strings.Contains(out, "tokens_file") {
		t.Fatalf("a good tokens file: %d %s", code, out)
	}
	tokensFile := state
	good, err := os.ReadFile(tokensFile)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Count(string(good), "\n")
	for _, tt := range []struct{ name, line, want string }{
		{"not a token", "not a token", "not a token"},
		{"a line too long", `{"label":"` + strings.Repeat("<", 70_000) + `"}`, "longer than"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if err := os.WriteFile(tokensFile, append(append([]byte{}, good...), tt.line+"\n"...), 0o600); err != nil {
				t.Fatal(err)
			}
			code, out := check()
			where := fmt.Sprintf("%s:%d:", tokensFile, lines+1)
			if code != exitError || !strings.Contains(out, "error: ") || !strings.Contains(out, where) || !strings.Contains(out, tt.want) {
				t.Fatalf("exit %d, want %d with %q and %q:\n%s", code, exitError, where, tt.want, out)
			}
		})
	}
}
