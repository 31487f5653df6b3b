package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// verifyBackups makes DIR/backups with db/good.tar (right sidecar),
// db/rotten.tar (its SHA256SUMS line names other bytes), db/changed.tar
// (rewritten after its sidecar was written), db/plain.tar (no checksum)
// and db/deep/ok.tar (right sidecar), and DIR/backupweb.ini naming it
// with the extra lines given. It returns the configuration's path.
func verifyBackups(t *testing.T, dir, extra string) string {
	t.Helper()
	sum := func(s string) string { h := sha256.Sum256([]byte(s)); return hex.EncodeToString(h[:]) }
	at := time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)
	put := func(rel, content string, mod time.Time) {
		p := filepath.Join(dir, "backups", filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, mod, mod); err != nil {
			t.Fatal(err)
		}
	}
	put("db/good.tar", "good", at)
	put("db/good.tar.sha256", sum("good")+"  good.tar\n", at)
	put("db/rotten.tar", "rotten", at)
	put("db/SHA256SUMS", sum("what was written")+"  rotten.tar\n", at)
	put("db/changed.tar.sha256", sum("first")+"\n", at)
	put("db/changed.tar", "second", at.Add(time.Hour))
	put("db/plain.tar", "plain", at)
	put("db/deep/ok.tar", "deep", at)
	put("db/deep/ok.tar.sha256", sum("deep")+"\n", at)
	ini := filepath.Join(dir, "backupweb.ini")
	body := "[server]\nlisten = 127.0.0.1:0\n[backups]\ndir = " + filepath.Join(dir, "backups") + "\n" + extra
	if err := os.WriteFile(ini, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return ini
}

// TestVerifyCommand: backupweb verify names each mismatch, sums up, and
// exits 1 on a mismatch, 0 when everything below PATH is whole, 1 for a
// PATH that names nothing and 2 for wrong usage.
func TestVerifyCommand(t *testing.T) {
	ini := verifyBackups(t, t.TempDir(), "")
	for _, tc := range []struct {
		name    string
		args    []string
		code    int
		out     []string
		notOut  []string
		errText string
	}{
		{"all", []string{"-config", ini}, exitError,
			[]string{"mismatch: db/rotten.tar: read " + hexOf("rotten"), "mismatch: db/changed.tar: read " + hexOf("second"),
				"verified 4 backups (20 B): 2 ok, 2 mismatch, 0 unreadable; 0 changed while read, 1 without a recorded checksum\n"},
			[]string{"good.tar", "ok.tar", "plain.tar"}, ""},
		{"a whole folder", []string{"-config", ini, "db/deep"}, exitOK, []string{"verified 1 backup (4 B): 1 ok, 0 mismatch"}, []string{"mismatch:"}, ""},
		{"one backup", []string{"-config", ini, "db/good.tar"}, exitOK, []string{"verified 1 backup (4 B): 1 ok"}, nil, ""},
		{"the route's spelling", []string{"-config", ini, "/backups/db/deep/"}, exitOK, []string{"1 ok"}, nil, ""},
		{"nothing there", []string{"-config", ini, "db/nothing"}, exitError, nil, nil, `"db/nothing" is neither a folder nor a backup`},
		{"two paths", []string{"-config", ini, "db", "web"}, exitUsage, nil, nil, "takes at most one PATH"},
		{"a broken configuration", []string{"-config", filepath.Join(t.TempDir(), "missing.ini")}, exitError, nil, nil, "the configuration cannot be used"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, out, errOut := testCLI(context.Background(), "", nil)
			if code := c.main(append([]string{"verify"}, tc.args...)); code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.code, out, errOut)
			}
			for _, w := range tc.out {
				if !strings.Contains(out.String(), w) {
					t.Errorf("stdout lacks %q:\n%s", w, out)
				}
			}
			for _, w := range tc.notOut {
				if strings.Contains(out.String(), w) {
					t.Errorf("stdout holds %q:\n%s", w, out)
				}
			}
			if !strings.Contains(errOut.String(), tc.errText) {
				t.Errorf("stderr lacks %q:\n%s", tc.errText, errOut)
			}
			if strings.Contains(errOut.String(), "verifying:") {
				t.Errorf("progress written to a stream that is not a terminal:\n%s", errOut)
			}
		})
	}
}

func hexOf(s string) string { h := sha256.Sum256([]byte(s)); return hex.EncodeToString(h[:]) }

// TestServeVerifies: with verify_every, the service checks the backups
// at once, shows each result in the folder's JSON, logs each mismatch,
// and counts them in backupweb_backups_verify_mismatches.
func TestServeVerifies(t *testing.T) {
	dir := t.TempDir()
	ini := verifyBackups(t, dir, "verify_every = 1h\nverify_rate = 10MB/s\n[server]\nmetrics_listen = 127.0.0.1:0\n")
	// [server] given twice: keep one.
	body, _ := os.ReadFile(ini)
	fixed := strings.Replace(string(body), "[server]\nlisten = 127.0.0.1:0\n", "", 1)
	fixed = strings.Replace(fixed, "[server]\nmetrics_listen", "[server]\nlisten = 127.0.0.1:0\nmetrics_listen", 1)
	if err := os.WriteFile(ini, []byte(fixed), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startServe(t, nil, "-config", ini)
	defer s.stop()
	var got map[string]string
	deadline := time.Now().Add(10 * time.Second)
	for {
		got = verifiedOf(t, "http://"+s.addr+"/api/backups?path=db/")
		if len(got) == 3 || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	want := map[string]string{"good.tar": "ok", "rotten.tar": "mismatch", "changed.tar": "mismatch"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: verified %q, want %q (all: %v)", k, got[k], v, got)
		}
	}
	if got["plain.tar"] != "" {
		t.Errorf("plain.tar, without a checksum, verified %q", got["plain.tar"])
	}
	m := regexp.MustCompile(`serving metrics" addr=(127\.0\.0\.1:\d+)`).FindStringSubmatch(s.log.String())
	if m == nil {
		t.Fatalf("no metrics listener:\n%s", s.log)
	}
	resp, err := http.Get("http://" + m[1] + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	text, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(text), "backupweb_backups_verify_mismatches 2\n") {
		t.Errorf("/metrics lacks the two mismatches:\n%s", text)
	}
	for _, line := range []string{`msg="verify: checksum mismatch" path=db/rotten.tar`, `msg="verify: pass done" files=4 ok=2 mismatch=2`} {
		if !strings.Contains(s.log.String(), line) {
			t.Errorf("the log lacks %q:\n%s", line, s.log)
		}
	}
}

// verifiedOf returns the verified field of each backup of a folder's
// JSON, by name ("" when absent).
func verifiedOf(t *testing.T, u string) map[string]string {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Backups []struct {
			Name     string `json:"name"`
			Verified string `json:"verified"`
		} `json:"backups"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for _, b := range out.Backups {
		if b.Verified != "" {
			m[b.Name] = b.Verified
		}
	}
	return m
}
