package filewatch

import (
	"context"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"
)

func TestStamp(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	missing, err := Stat(path)
	if err == nil || !missing.Same(Stamp{}) || missing.Racy() {
		t.Fatalf("a missing file: %v, same as zero %v, racy %v", err, missing.Same(Stamp{}), missing.Racy())
	}
	if err := os.WriteFile(path, []byte("a"), 0o600); err != nil {
		t.Fatal(err)
	}
	first, err := Stat(path)
	if err != nil || first.Same(missing) || !first.Racy() {
		t.Fatalf("a new file: %v, same as missing %v, racy %v", err, first.Same(missing), first.Racy())
	}
	again, _ := Stat(path)
	if !again.Same(first) {
		t.Error("an unchanged file has a new stamp")
	}
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(path, old, old); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	if touched := Of(info); touched.Same(first) || touched.Racy() {
		t.Errorf("after a change of time: same %v, racy %v", touched.Same(first), touched.Racy())
	}
}

func TestEvery(t *testing.T) {
	var n atomic.Int32
	Every(context.Background(), 0, func() { n.Add(1) }) // off: returns at once
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		Every(ctx, time.Millisecond, func() {
			if n.Add(1) == 3 {
				cancel()
			}
		})
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Every did not end with its context")
	}
	if got := n.Load(); got < 3 {
		t.Errorf("polled %d times, want 3", got)
	}
}
