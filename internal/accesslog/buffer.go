package accesslog

import (
	"io"
	"sync"
	"time"
)

// Defaults of NewBuffer.
const (
	// DefaultSize bounds the bytes a Buffer holds before a writer must wait
	// for them to reach the destination: about 400 lines.
	DefaultSize = 64 << 10
	// FlushInterval is the longest a written line waits in a Buffer.
	FlushInterval = 100 * time.Millisecond
)

// Buffer is a bounded, concurrency-safe buffered writer for log lines. A
// Write keeps its bytes together (a line is never split between two writes
// to the destination). Lines reach the destination when the buffer is
// full, at least every interval, on Flush and on Close.
//
// Its memory is bounded: at most two buffers of size bytes (one filling,
// one being written). When the destination is slow or blocked, writers
// wait for it: a request is slowed rather than a line lost or memory
// grown. After Close, writes go straight to the destination.
type Buffer struct {
	size int
	dst  io.Writer

	wmu   sync.Mutex // held while writing to dst; guards spare
	spare []byte

	mu     sync.Mutex // guards buf and closed
	buf    []byte
	closed bool

	stop      chan struct{}
	done      chan struct{}
	closeOnce sync.Once
}

// NewBuffer returns a Buffer of size bytes (DefaultSize when size <= 0)
// writing to dst, flushed every interval (FlushInterval when <= 0) by a
// goroutine that Close stops.
func NewBuffer(dst io.Writer, size int, interval time.Duration) *Buffer {
	if size <= 0 {
		size = DefaultSize
	}
	if interval <= 0 {
		interval = FlushInterval
	}
	b := &Buffer{
		size:  size,
		dst:   dst,
		buf:   make([]byte, 0, size),
		spare: make([]byte, 0, size),
		stop:  make(chan struct{}),
		done:  make(chan struct{}),
	}
	go b.tick(interval)
	return b
}

func (b *Buffer) tick(interval time.Duration) {
	defer close(b.done)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			b.Flush()
		case <-b.stop:
			return
		}
	}
}

// Write holds p until the next flush. When p does not fit beside what the
// buffer holds, the buffer is flushed first, waiting for the destination.
// p is copied; the caller may reuse it. It never returns an error of the
// destination's: the lines are the Buffer's from then on.
func (b *Buffer) Write(p []byte) (int, error) {
	for {
		b.mu.Lock()
		if b.closed {
			b.mu.Unlock()
			b.wmu.Lock()
			defer b.wmu.Unlock()
			return b.dst.Write(p)
		}
		if len(b.buf)+len(p) <= b.size {
			b.buf = append(b.buf, p...)
			b.mu.Unlock()
			return len(p), nil
		}
		if len(b.buf) == 0 {
			// Larger than the whole buffer: straight through, in order
			// (the buffer is empty), holding the destination.
			b.mu.Unlock()
			b.wmu.Lock()
			defer b.wmu.Unlock()
			return b.dst.Write(p)
		}
		b.mu.Unlock()
		b.Flush()
	}
}

// Flush writes what the buffer holds to the destination, waiting for it.
// Writers may fill the buffer meanwhile, up to its size.
func (b *Buffer) Flush() {
	b.wmu.Lock()
	defer b.wmu.Unlock()
	b.mu.Lock()
	b.buf, b.spare = b.spare[:0], b.buf
	b.mu.Unlock()
	if len(b.spare) > 0 {
		// A destination that fails (a closed stderr) loses these lines;
		// there is nowhere else to say so.
		b.dst.Write(b.spare)
	}
	b.spare = b.spare[:0]
}

// Close flushes the buffer, stops the periodic flush and makes every later
// Write go straight to the destination, so that nothing written after a
// shutdown began is lost. It does not close the destination. Calling it
// again does nothing.
func (b *Buffer) Close() error {
	b.closeOnce.Do(func() {
		close(b.stop)
		<-b.done
		b.wmu.Lock()
		defer b.wmu.Unlock()
		b.mu.Lock()
		b.closed = true
		rest := b.buf
		b.buf = nil
		b.mu.Unlock()
		if len(rest) > 0 {
			b.dst.Write(rest)
		}
	})
	return nil
}
