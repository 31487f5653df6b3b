package ini

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestCheckPrivate(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("permission bits do not describe access on Windows")
	}
	tests := []struct {
		mode os.FileMode
		warn bool
	}{
		{0o600, false}, {0o400, false}, {0o700, false}, {0o640, false}, {0o440, false},
		{0o644, true}, {0o604, true}, {0o620, true}, {0o602, true}, {0o666, true}, {0o650, true}, {0o660, true},
	}
	for _, tt := range tests {
		path := filepath.Join(t.TempDir(), "users")
		if err := os.WriteFile(path, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, tt.mode); err != nil {
			t.Fatal(err)
		}
		rep := &Report{}
		CheckPrivate(rep, path, "password hashes")
		ps := rep.Problems()
		if !tt.warn {
			if len(ps) != 0 {
				t.Errorf("mode %04o: unexpected %v", tt.mode, ps)
			}
			continue
		}
		if len(ps) != 1 {
			t.Fatalf("mode %04o: got %v, want one warning", tt.mode, ps)
		}
		p := ps[0]
		want := []string{"password hashes", "chmod 600 " + path, "chmod 640"}
		for _, w := range want {
			if !strings.Contains(p.Msg, w) {
				t.Errorf("mode %04o: %q lacks %q", tt.mode, p.Msg, w)
			}
		}
		if p.Severity != Warning || p.File != path {
			t.Errorf("mode %04o: %#v", tt.mode, p)
		}
	}
}

func TestCheckPrivateMissingFile(t *testing.T) {
	rep := &Report{}
	CheckPrivate(rep, filepath.Join(t.TempDir(), "absent"), "x")
	if len(rep.Problems()) != 0 {
		t.Errorf("a missing file is reported by whoever reads it, got %v", rep.Problems())
	}
}

// TestCheckPrivateGroupRead: group read is accepted for the service's
// group and warned about for any other group.
func TestCheckPrivateGroupRead(t *testing.T) {
	if runtime.GOOS == "windows" || os.Geteuid() != 0 {
		t.Skip("giving a file a group this process is not in needs root (and Unix groups)")
	}
	const foreign = 8767
	path := filepath.Join(t.TempDir(), "users")
	if err := os.WriteFile(path, []byte("x"), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(path, 0, foreign); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name    string
		service uint32
		warn    bool
	}{
		{"the service's group", foreign, false},
		{"another group", foreign + 1, true},
	} {
		old := serviceGroupID
		serviceGroupID = func() (uint32, bool) { return tt.service, true }
		rep := &Report{}
		CheckPrivate(rep, path, "password hashes")
		serviceGroupID = old
		ps := rep.Problems()
		switch {
		case tt.warn && (len(ps) != 1 || !strings.Contains(ps[0].Msg, "chgrp "+ServiceGroup)):
			t.Errorf("%s: %v, want one warning naming chgrp", tt.name, ps)
		case !tt.warn && len(ps) != 0:
			t.Errorf("%s: unexpected %v", tt.name, ps)
		}
	}
}
