package catalog

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func hexSum(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// verifyFixture is a folder of backups: a.tar with a right sidecar, b.tar
// with a right SHA256SUMS line, c.tar with a wrong one, d.tar without a
// checksum, e.tar rewritten after its sidecar was written, and
// deep/f.tar with a right sidecar.
func verifyFixture(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	at := time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)
	put := func(rel, content string, mod time.Time) {
		p := filepath.Join(dir, filepath.FromSlash(rel))
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
	put("db/a.tar", "alpha", at)
	put("db/a.tar.sha256", hexSum("alpha")+"  a.tar\n", at)
	put("db/b.tar", "bravo", at)
	put("db/c.tar", "charlie", at)
	put("db/SHA256SUMS", hexSum("bravo")+"  b.tar\n"+hexSum("not charlie")+"  c.tar\n", at)
	put("db/d.tar", "delta", at)
	put("db/e.tar.sha256", hexSum("echo")+"\n", at)
	put("db/e.tar", "echo, changed later", at.Add(time.Hour))
	put("db/deep/f.tar", "foxtrot", at)
	put("db/deep/f.tar.sha256", hexSum("foxtrot")+"\n", at)
	return dir
}

// TestVerify: a pass finds the wrong digest and the file changed after
// its checksum, keeps each result for the file as it is, forgets it when
// the file changes, and counts the mismatches of the files as they are.
func TestVerify(t *testing.T) {
	dir := verifyFixture(t)
	c := New(dir)
	defer c.Close()
	var done []Check
	started := -1
	sum, err := c.Verify(context.Background(), "", VerifyOptions{
		Started: func(files int, _ int64) { started = files },
		Done:    func(ch Check) { done = append(done, ch) },
	})
	if err != nil {
		t.Fatal(err)
	}
	want := VerifySummary{Files: 5, OK: 3, Mismatch: 2, NoSum: 1, Bytes: int64(len("alpha") + len("bravo") + len("charlie") + len("echo, changed later") + len("foxtrot"))}
	if sum != want || started != 5 || len(done) != 5 {
		t.Fatalf("summary %+v (started %d, %d reported), want %+v", sum, started, len(done), want)
	}
	top, err := c.Tree()
	if err != nil {
		t.Fatal(err)
	}
	db, _ := top.Lookup("db/")
	results := map[string]string{}
	for _, b := range db.Backups {
		if r, at, ok := c.LastCheck("db/"+b.Name, b); ok {
			if at.IsZero() {
				t.Errorf("%s: no time", b.Name)
			}
			results[b.Name] = r
		}
	}
	wantResults := map[string]string{"a.tar": VerifyOK, "b.tar": VerifyOK, "c.tar": VerifyMismatch, "e.tar": VerifyMismatch}
	if len(results) != len(wantResults) {
		t.Errorf("results %v, want %v", results, wantResults)
	}
	for k, v := range wantResults {
		if results[k] != v {
			t.Errorf("%s: %q, want %q", k, results[k], v)
		}
	}
	if n, err := c.VerifyMismatches(); n != 2 || err != nil {
		t.Errorf("VerifyMismatches = %d, %v; want 2", n, err)
	}

	// c.tar rewritten: its old result is not shown, and not counted.
	if err := os.WriteFile(filepath.Join(dir, "db", "c.tar"), []byte("charlie again"), 0o600); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool {
		top, _ := c.Tree()
		db, _ := top.Lookup("db/")
		for _, b := range db.Backups {
			if b.Name == "c.tar" {
				_, _, ok := c.LastCheck("db/c.tar", b)
				return !ok
			}
		}
		return false
	})
	if n, _ := c.VerifyMismatches(); n != 1 {
		t.Errorf("VerifyMismatches = %d after the rewrite, want 1", n)
	}

	// One folder, one file, nothing.
	if s, err := c.Verify(context.Background(), "db/deep", VerifyOptions{}); err != nil || s.Files != 1 || s.OK != 1 {
		t.Errorf("db/deep: %+v %v", s, err)
	}
	if s, err := c.Verify(context.Background(), "db/a.tar", VerifyOptions{}); err != nil || s.Files != 1 || s.OK != 1 {
		t.Errorf("db/a.tar: %+v %v", s, err)
	}
	if s, err := c.Verify(context.Background(), "db/d.tar", VerifyOptions{}); err != nil || s.Files != 0 || s.NoSum != 1 {
		t.Errorf("db/d.tar: %+v %v", s, err)
	}
	for _, p := range []string{"nothing", "db/nothing.tar", "db/a.tar.sha256", "../db"} {
		if _, err := c.Verify(context.Background(), p, VerifyOptions{}); !errors.Is(err, ErrNotFound) {
			t.Errorf("%s: %v, want ErrNotFound", p, err)
		}
	}

	// A pass cut short says so.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.Verify(ctx, "", VerifyOptions{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled pass: %v", err)
	}
}

// waitFor polls cond for up to five seconds.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatal("condition not met within 5s")
}

// TestVerifyRate: on a clock of the test's own, a pass over 1 MiB at
// 100 KiB/s waits what the bucket owes (the megabyte less the one burst
// it may read at once), and no rate waits not at all.
func TestVerifyRate(t *testing.T) {
	for _, tt := range []struct {
		rate int64
		want time.Duration
	}{
		{100 << 10, time.Duration(float64((1<<20)-minBurst) / float64(100<<10) * float64(time.Second))},
		{10 << 20, 0}, // the burst, a tenth of a second's worth (1 MiB), covers it
		{0, 0},
	} {
		dir := t.TempDir()
		content := strings.Repeat("x", 1<<20)
		if err := os.WriteFile(filepath.Join(dir, "big.tar"), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "big.tar.sha256"), []byte(hexSum(content)+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		now := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
		var slept time.Duration
		c := New(dir)
		sum, err := c.Verify(context.Background(), "", VerifyOptions{
			Rate:  tt.rate,
			clock: func() time.Time { return now },
			sleep: func(_ context.Context, d time.Duration) error { slept += d; now = now.Add(d); return nil },
		})
		c.Close()
		if err != nil || sum.OK != 1 {
			t.Fatalf("rate %d: %+v %v", tt.rate, sum, err)
		}
		if math.Abs(float64(slept-tt.want)) > float64(tt.want)/100+float64(time.Millisecond) {
			t.Errorf("rate %d: slept %v, want %v", tt.rate, slept, tt.want)
		}
	}
}
