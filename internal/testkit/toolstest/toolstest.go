// Package toolstest finds the outside programs some tests run (promtool,
// htpasswd, nginx…). A test whose program is missing is skipped with a
// message that names it, unless BACKUPWEB_REQUIRE_TOOLS=1 (as in CI), which
// turns the skip into a failure, so a missing install step cannot hide.
package toolstest

import (
	"fmt"
	"os"
	"os/exec"
	"testing"
)

// RequireTools reports whether missing tools fail tests instead of
// skipping them (BACKUPWEB_REQUIRE_TOOLS=1).
func RequireTools() bool { return os.Getenv("BACKUPWEB_REQUIRE_TOOLS") == "1" }

// Need returns the path of the program name, or skips (fails under
// BACKUPWEB_REQUIRE_TOOLS=1) the test when it is not installed; pkg names
// the Debian package that provides it.
func Need(t testing.TB, name, pkg string) string {
	t.Helper()
	path, skip, err := Find(name, pkg)
	if err != nil {
		t.Fatal(err)
	}
	if skip != "" {
		t.Skip(skip + "; skipping")
	}
	return path
}

// Find is Need for a program rather than a test (cmd/loadtest): the path
// of name, or when it is not installed a reason to skip what needs it,
// or under BACKUPWEB_REQUIRE_TOOLS=1 an error instead.
func Find(name, pkg string) (path, skip string, err error) {
	path, err = exec.LookPath(name)
	if err == nil {
		return path, "", nil
	}
	if RequireTools() {
		return "", "", fmt.Errorf("%s is required (BACKUPWEB_REQUIRE_TOOLS=1) but not found: apt-get install %s", name, pkg)
	}
	return "", fmt.Sprintf("%s not found (Debian package %s)", name, pkg), nil
}

// Probe runs probe (for example `python3 -c "import bcrypt"`) and, when it
// fails, skips the test (fails it under BACKUPWEB_REQUIRE_TOOLS=1) with a
// message naming what is missing.
func Probe(t testing.TB, what string, probe *exec.Cmd) {
	t.Helper()
	if err := probe.Run(); err != nil {
		msg := what + " is not available (" + err.Error() + ")"
		if RequireTools() {
			t.Fatal(msg + "; BACKUPWEB_REQUIRE_TOOLS=1 requires it")
		}
		t.Skip(msg + "; skipping (set BACKUPWEB_REQUIRE_TOOLS=1 to make this a failure)")
	}
}
