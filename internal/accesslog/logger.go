package accesslog

import (
	"context"
	"io"
	"log/slog"
	"sync"
)

// Logger receives one Entry per answered request. It must be safe for
// concurrent use.
type Logger interface {
	Log(ctx context.Context, e *Entry)
}

// Writer is the program's Logger: it formats entries by hand in its
// Format and writes each line with one Write to its destination (a
// Buffer, normally).
type Writer struct {
	format Format
	out    io.Writer
}

// NewWriter returns a Writer of lines in format f to out.
func NewWriter(out io.Writer, f Format) *Writer { return &Writer{format: f, out: out} }

// lineBufs recycles the bytes of formatted lines: one line per request
// must not cost an allocation.
var lineBufs = sync.Pool{New: func() any { b := make([]byte, 0, 256); return &b }}

// Log writes e's line.
func (w *Writer) Log(_ context.Context, e *Entry) {
	bp := lineBufs.Get().(*[]byte)
	line := w.format.Append((*bp)[:0], e)
	w.out.Write(line)
	if cap(line) <= 4<<10 {
		*bp = line
		lineBufs.Put(bp)
	}
}

// Slog is a Logger that writes through an slog.Logger (the record
// "request" at info level with the entry's fields), for embedders and
// tests that give a logger rather than a destination. It costs what slog
// costs; the program uses a Writer.
type Slog struct{ L *slog.Logger }

// Log writes e as an slog record.
func (s Slog) Log(ctx context.Context, e *Entry) {
	if !s.L.Enabled(ctx, slog.LevelInfo) {
		return
	}
	s.L.LogAttrs(ctx, slog.LevelInfo, "request", e.attrs()...)
}

// attrs are e's fields as slog attributes, in the order of a line.
func (e *Entry) attrs() []slog.Attr {
	attrs := []slog.Attr{
		slog.String("method", e.Method),
		slog.String("path", e.Path),
		slog.Int("status", e.Status),
		slog.Int64("bytes", e.Bytes),
		slog.Duration("duration", e.Duration),
		slog.String("client", e.ClientText()),
	}
	if e.HasUser {
		attrs = append(attrs, slog.String("user", e.User))
	}
	return attrs
}
