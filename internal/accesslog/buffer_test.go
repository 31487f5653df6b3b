package accesslog

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/testkit"
	"github.com/backupweb/backupweb/internal/testkit/logtest"
)

func TestBufferFlushesWithinInterval(t *testing.T) {
	dst := &logtest.Buffer{}
	b := NewBuffer(dst, 0, 0)
	defer b.Close()
	b.Write([]byte("one\n"))
	if got := dst.String(); got != "" {
		t.Fatalf("written at once: %q; the line should wait for a flush", got)
	}
	testkit.WaitUntil(t, 10*time.Second, func() bool { return dst.String() == "one\n" }, func() string {
		return fmt.Sprintf("the periodic flush never wrote the line: %q", dst.String())
	})
}

func TestBufferCloseLosesNothing(t *testing.T) {
	dst := &logtest.Buffer{}
	// An interval that never comes: only Close can write the lines.
	b := NewBuffer(dst, 1<<10, time.Hour)
	var want strings.Builder
	for i := range 100 {
		line := fmt.Sprintf("line %d\n", i)
		want.WriteString(line)
		b.Write([]byte(line))
	}
	b.Close()
	if got := dst.String(); got != want.String() {
		t.Fatalf("after Close:\n got %q\nwant %q", got, want.String())
	}
	// After Close, straight through.
	b.Write([]byte("late\n"))
	if got := dst.String(); !strings.HasSuffix(got, "late\n") {
		t.Fatalf("a write after Close was not written: %q", got)
	}
	b.Close() // again: nothing happens
}

// TestBufferStalledPipe: a destination nobody reads makes writers wait,
// with the buffer's memory bounded, and loses nothing once it is read.
func TestBufferStalledPipe(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	const size = 4 << 10
	b := NewBuffer(w, size, 10*time.Millisecond)
	defer b.Close()

	// Far more than the pipe (64 KiB on Linux, at most 1 MiB) and the
	// buffers hold together.
	const writers, perWriter = 4, 20000
	run := testkit.InBackground(writers, perWriter, func(g, i int) bool {
		fmt.Fprintf(b, "writer %d line %05d %s\n", g, i, strings.Repeat("x", 40))
		return true
	})

	// Nobody reads: the writers must come to a stop, not finish.
	last := testkit.Settled(run.Count)
	select {
	case <-run.Done:
		t.Fatal("every write completed with nobody reading: lines were dropped or memory grew")
	default:
	}
	if last >= writers*perWriter {
		t.Fatalf("%d lines written with nobody reading", last)
	}
	b.mu.Lock()
	held, capacity := len(b.buf), cap(b.buf)
	b.mu.Unlock()
	if held > size || capacity > size {
		t.Fatalf("buffer holds %d bytes (capacity %d), bound is %d", held, capacity, size)
	}

	// Reading resumes the writers; every line arrives whole, once.
	seen := make(map[string]bool, writers*perWriter)
	lines := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(r)
		for len(seen) < writers*perWriter && sc.Scan() {
			l := sc.Text()
			if seen[l] || !strings.HasPrefix(l, "writer ") || len(l) != len("writer 0 line 00000 ")+40 {
				lines <- fmt.Errorf("line %q broken or repeated", l)
				return
			}
			seen[l] = true
			if len(seen) == writers*perWriter {
				break
			}
		}
		lines <- sc.Err()
	}()
	select {
	case <-run.Done:
	case <-time.After(time.Minute):
		t.Fatalf("writers did not resume: %d of %d lines written", run.Count(), writers*perWriter)
	}
	b.Flush()
	if err := <-lines; err != nil {
		t.Fatal(err)
	}
	if len(seen) != writers*perWriter {
		t.Fatalf("%d lines read, want %d", len(seen), writers*perWriter)
	}
}
