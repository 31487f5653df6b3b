package catalog

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// changeTime is the status change time (ctime) of the file at p.
func changeTime(t testing.TB, p string) time.Time {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Stat(p, &st); err != nil {
		t.Fatal(err)
	}
	return time.Unix(st.Ctim.Sec, st.Ctim.Nsec)
}

// rewriteAfter writes content over the file at p in place and sets its
// modification time to mod, again until its change time is past every
// one of after: the file system's clock counts in ticks of a few
// milliseconds, and this is a rewrite a moment later.
func rewriteAfter(t testing.TB, p, content string, mod time.Time, after ...time.Time) {
	t.Helper()
	for i := 0; ; i++ {
		f, err := os.OpenFile(p, os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		_, err = f.WriteAt([]byte(content), 0)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, mod, mod); err != nil {
			t.Fatal(err)
		}
		c, past := changeTime(t, p), true
		for _, a := range after {
			past = past && c.After(a)
		}
		if past {
			return
		}
		if i == 1000 {
			t.Fatalf("%s: the change time does not move on a rewrite", p)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestChecksumStaleByChangeTime: a backup rewritten after its checksum
// file, with the same size and its modification time set back under the
// checksum file's, has a stale checksum (the change times tell), in the
// tree and on Open; its LastChanged is the rewrite's time, not the time
// set back. A checksum file written again after the rewrite is current.
func TestChecksumStaleByChangeTime(t *testing.T) {
	const sum = "0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a"
	for _, tt := range []struct {
		name      string
		sumAgain  bool // the checksum file is written again after the rewrite
		wantStale bool
	}{
		{"rewritten after the checksum", false, true},
		{"checksum written again", true, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFile(t, dir, "a.tar", "aaaa", base)
			writeFile(t, dir, "a.tar.sha256", sum+"\n", base.Add(time.Hour))
			p, sp := filepath.Join(dir, "a.tar"), filepath.Join(dir, "a.tar.sha256")
			rewriteAfter(t, p, "bbbb", base, changeTime(t, p), changeTime(t, sp))
			rewritten := changeTime(t, p)
			if tt.sumAgain {
				rewriteAfter(t, sp, sum+"\n", base.Add(time.Hour), rewritten)
			}
			c := New(dir)
			defer c.Close()
			top, err := c.Tree()
			if err != nil {
				t.Fatal(err)
			}
			if len(top.Backups) != 1 || top.Backups[0].SHA256 != sum || top.Backups[0].SumStale != tt.wantStale {
				t.Errorf("in the tree: %+v, want stale %t", top.Backups, tt.wantStale)
			}
			f, b, err := c.Open("a.tar")
			if err != nil {
				t.Fatal(err)
			}
			f.Close()
			if b.SHA256 != sum || b.SumStale != tt.wantStale {
				t.Errorf("on Open: %q stale %t, want stale %t", b.SHA256, b.SumStale, tt.wantStale)
			}
			if !b.Modified.Equal(base) || !b.Changed.Equal(rewritten) || !b.LastChanged().Equal(rewritten) {
				t.Errorf("times: modified %v changed %v last changed %v, want %v, %v, %v", b.Modified, b.Changed, b.LastChanged(), base, rewritten, rewritten)
			}
		})
	}
}
