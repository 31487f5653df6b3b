package proxy

import "testing"

// TestBufferPool: the copy buffers are 32 KiB, reused without allocating,
// and a buffer the pool did not give is not taken.
func TestBufferPool(t *testing.T) {
	var p bufferPool
	b := p.Get()
	if len(b) != copyBufferSize || cap(b) != copyBufferSize {
		t.Fatalf("buffer of %d (cap %d), want %d", len(b), cap(b), copyBufferSize)
	}
	p.Put(b)
	if n := testing.AllocsPerRun(100, func() { p.Put(p.Get()) }); n != 0 {
		t.Errorf("Get and Put: %v allocations, want 0", n)
	}
	p.Put(make([]byte, 10))                    // not ours: ignored
	p.Put(make([]byte, copyBufferSize, 1<<16)) // not ours either
	for range 4 {
		if b := p.Get(); len(b) != copyBufferSize || cap(b) != copyBufferSize {
			t.Fatalf("after foreign Puts: buffer of %d (cap %d)", len(b), cap(b))
		}
	}
}
