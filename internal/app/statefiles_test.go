package app

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/testkit/logtest"
	"github.com/backupweb/backupweb/internal/tokens"
)

// TestStateFilesMovedOnce: the factors and tokens files default to
// state_dir; files left at their old default place beside the user file
// are read there by Check (which moves nothing and says where they go),
// and moved once by Open, one log line each; a second Open moves nothing.
// A file that cannot be moved is an error: the service does not start
// without the file in force.
func TestStateFilesMovedOnce(t *testing.T) {
	dir := t.TempDir()
	users := filepath.Join(dir, "users")
	writeFile(t, users, usersText(t, "alice"))
	state := filepath.Join(dir, "state")
	oldTokens, oldFactors := users+".tokens", users+".factors"
	tok := &tokens.Token{User: "alice", Label: "nightly"}
	if _, err := tokens.New(tok, time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := tokens.Edit(oldTokens, func(d *tokens.Doc) error { d.Add(tok); return nil }); err != nil {
		t.Fatal(err)
	}
	writeFile(t, oldFactors, "")
	want, _ := os.ReadFile(oldTokens)
	path := filepath.Join(dir, "backupweb.ini")
	writeFile(t, path, "[server]\nlisten = 127.0.0.1:0\nstate_dir = "+state+"\n[backups]\ndir = "+dir+
		"\n[authentication]\ntype = flask-login\nusers_file = "+users+"\nuse_bcrypt = True\nsecond_factor = optional\n")
	env := func(k string) (string, bool) {
		if k == SecretEnv {
			return strings.Repeat("ab", 32), true
		}
		return "", false
	}

	a := Check(path, Options{LookupEnv: env})
	if a.Config.Report.HasErrors() {
		t.Fatal(a.Config.Report.Err())
	}
	report := reportText(a)
	for _, name := range []string{"tokens", "factors"} {
		w := oldTokens
		if name == "factors" {
			w = oldFactors
		}
		if !strings.Contains(report, w+" is at its old default place; serve moves it to "+filepath.Join(state, name)) {
			t.Errorf("check-config does not say %s moves:\n%s", w, report)
		}
	}
	if _, err := os.Stat(filepath.Join(state, "tokens")); err == nil {
		t.Fatal("Check moved a file")
	}

	open := func() string {
		t.Helper()
		buf := &logtest.Buffer{}
		a := Open(path, Options{LookupEnv: env, Logger: slog.New(slog.NewTextHandler(buf, nil))})
		if a.Provider == nil {
			t.Fatalf("refused: %v", a.Config.Report.Err())
		}
		if c, ok := a.Provider.(io.Closer); ok {
			c.Close()
		}
		return buf.String()
	}
	log := open()
	if n := strings.Count(log, "state: moved"); n != 2 {
		t.Errorf("%d move lines, want 2:\n%s", n, log)
	}
	got, err := os.ReadFile(filepath.Join(state, "tokens"))
	if err != nil || string(got) != string(want) {
		t.Fatalf("state_dir/tokens: %q %v, want %q", got, err, want)
	}
	for _, old := range []string{oldTokens, oldFactors} {
		if _, err := os.Stat(old); err == nil {
			t.Errorf("%s is still there", old)
		}
	}
	if fi, err := os.Stat(filepath.Join(state, "factors")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("state_dir/factors: %v %v", fi, err)
	}
	if log := open(); strings.Contains(log, "state: moved") {
		t.Errorf("moved again:\n%s", log)
	}

	// A second old file appears (restored from a backup, say): the one in
	// state_dir stays in force and the old one is not read.
	writeFile(t, oldTokens, "not a token file\n")
	if log := open(); strings.Contains(log, "state: moved") {
		t.Errorf("moved over the file in force:\n%s", log)
	}
	os.Remove(oldTokens)

	// An old file that cannot be read: an error, nothing moved.
	os.Remove(filepath.Join(state, "factors"))
	os.Remove(oldFactors)
	if err := os.Mkdir(oldFactors, 0o700); err != nil {
		t.Fatal(err)
	}
	b := Open(path, Options{LookupEnv: env})
	if b.Provider != nil || !strings.Contains(reportText(b), "factors_file: cannot move "+oldFactors) {
		t.Fatalf("a file that cannot be moved: %v", b.Config.Report.Err())
	}
	if _, err := os.Stat(filepath.Join(state, "factors")); err == nil {
		t.Fatal("a failed move left a file in state_dir")
	}
}

// reportText is every problem of a's report, one a line.
func reportText(a *App) string {
	var b strings.Builder
	for _, p := range a.Config.Report.Problems() {
		b.WriteString(p.String() + "\n")
	}
	return b.String()
}
