package password

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/backupweb/backupweb/internal/testkit/toolstest"
)

// committed lists the real hashes under testdata/ made by other producers,
// with the test passwords documented in testdata/README.md.
var committed = []struct {
	file, prefix, pw string
}{
	{"htpasswd-2y.txt", "$2y$12$", "correct horse battery staple"},
	{"python-2b.txt", "$2b$12$", "s3cret-Backup!"},
	{"go-2a.txt", "$2a$12$", "Go-made test password 2a"},
}

// readHash returns the hash in a testdata file: its first non-empty line,
// without the "user:" that htpasswd puts in front.
func readHash(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if line = strings.TrimSpace(line); line != "" {
			if i := strings.LastIndexByte(line, ':'); i >= 0 {
				line = line[i+1:]
			}
			return line
		}
	}
	t.Fatalf("%s holds no hash", name)
	return ""
}

// TestCommittedHashes checks real cost-12 hashes from htpasswd, Python and
// Go: the right password matches, and longer inputs that start with it do
// not. Each file costs one cost-12 bcrypt computation (a quarter of a second,
// several under -race), which is the point of the test; wrong passwords are
// covered at low cost elsewhere.
func TestCommittedHashes(t *testing.T) {
	v := NewVerifier(VerifierOptions{CacheSize: -1, Gate: NewGate(len(committed))})
	for _, c := range committed {
		t.Run(c.file, func(t *testing.T) {
			t.Parallel()
			h := readHash(t, c.file)
			if !strings.HasPrefix(h, c.prefix) {
				t.Fatalf("%s does not start with %s", c.file, c.prefix)
			}
			if cost, err := ParseHash(h); err != nil || cost != Cost {
				t.Fatalf("ParseHash = %d, %v; want %d", cost, err, Cost)
			}
			padded := c.pw + strings.Repeat("!", MaxLen+1-len(c.pw))
			for _, tc := range []struct {
				pw   string
				want bool
			}{
				{c.pw, true},
				{padded, false}, // 73 bytes starting with the password: refused before bcrypt
			} {
				ok, err := v.Check(context.Background(), h, []byte(tc.pw))
				if err != nil || ok != tc.want {
					t.Errorf("Check(%d-byte password) = %v, %v; want %v", len(tc.pw), ok, err, tc.want)
				}
			}
		})
	}
}

// requireTool skips the test when the outside tool is missing, or fails it
// when BACKUPWEB_REQUIRE_TOOLS=1 says the tool must be there.
func requireTool(t *testing.T, what string, probe *exec.Cmd) {
	t.Helper()
	toolstest.Probe(t, what, probe)
}

// checkFresh verifies hashes made at run time by an outside tool: the
// right password matches, wrong ones do not, and for a 72-byte password the
// 73-byte extension is refused (bcrypt alone would ignore the 73rd byte).
func checkFresh(t *testing.T, prefix string, makeHash func(pw string) string) {
	t.Helper()
	v := NewVerifier(VerifierOptions{CacheSize: -1})
	ctx := context.Background()
	long := strings.Repeat("0123456789abcdef", 5)[:MaxLen]
	for _, pw := range []string{"correct horse battery staple", long} {
		h := makeHash(pw)
		if !strings.HasPrefix(h, prefix) {
			t.Fatalf("tool made a hash not starting with %s", prefix)
		}
		for _, tc := range []struct {
			pw   string
			want bool
		}{
			{pw, true},
			{pw[:len(pw)-1], false},
			{pw + "!", false},
		} {
			ok, err := v.Check(ctx, h, []byte(tc.pw))
			if err != nil || ok != tc.want {
				t.Errorf("Check(%d-byte password) = %v, %v; want %v", len(tc.pw), ok, err, tc.want)
			}
		}
	}
}

func TestFreshHtpasswdHash(t *testing.T) {
	const tool = "/usr/bin/htpasswd"
	requireTool(t, tool, exec.Command(tool, "-nbB", "-C", "4", "probe", "probe"))
	checkFresh(t, "$2y$04$", func(pw string) string {
		out, err := exec.Command(tool, "-nbB", "-C", "4", "alice", pw).Output()
		if err != nil {
			t.Fatalf("htpasswd: %v", err)
		}
		line := strings.TrimSpace(string(out))
		return line[strings.IndexByte(line, ':')+1:]
	})
}

func TestFreshPythonHash(t *testing.T) {
	const python = "/usr/bin/python3"
	requireTool(t, python+" with the bcrypt module", exec.Command(python, "-c", "import bcrypt"))
	checkFresh(t, "$2b$04$", func(pw string) string {
		cmd := exec.Command(python, "-c",
			"import bcrypt, sys; print(bcrypt.hashpw(sys.stdin.buffer.read(), bcrypt.gensalt(4)).decode())")
		cmd.Stdin = strings.NewReader(pw)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("python bcrypt: %v", err)
		}
		return strings.TrimSpace(string(out))
	})
}
