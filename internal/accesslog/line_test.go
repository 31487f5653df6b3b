package accesslog

import (
	"bytes"
	"context"
	"log/slog"
	"net/netip"
	"testing"
	"time"
)

// slogLine is what the program's slog handler writes for e: the reference
// the hand-written lines must equal byte for byte.
func slogLine(t *testing.T, f Format, e *Entry) string {
	t.Helper()
	var buf bytes.Buffer
	var h slog.Handler
	if f == JSON {
		h = slog.NewJSONHandler(&buf, nil)
	} else {
		h = slog.NewTextHandler(&buf, nil)
	}
	r := slog.NewRecord(e.Time, slog.LevelInfo, "request", 0)
	r.AddAttrs(e.attrs()...)
	if err := h.Handle(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

func TestLinesEqualSlog(t *testing.T) {
	paris := time.FixedZone("CET", 3600)
	times := []time.Time{
		time.Date(2026, 11, 25, 6, 12, 40, 123456789, time.UTC),
		time.Date(2026, 1, 2, 3, 4, 5, 0, paris),
		time.Date(2026, 1, 2, 3, 4, 5, 999999999, paris),
		{},
	}
	entries := []Entry{
		{Method: "GET", Path: "/api/backups", Status: 200, Bytes: 123, Duration: 1234567, Client: "127.0.0.1"},
		{Method: "GET", Path: "/api/me", Status: 200, Bytes: 57, Duration: 850 * time.Nanosecond, Client: "::1", User: "alice", HasUser: true},
		{Method: "POST", Path: "/login", Status: 303, Duration: 3*time.Hour + 2*time.Second, Client: "10.0.0.1", User: "", HasUser: true},
		{Method: "GET", Path: "/backups/a b=c.tar", Status: 404, Bytes: -1, Duration: -5 * time.Millisecond, Client: "10.0.0.2"},
		{Method: "GET", Path: "/x\"y\\z\n\r\t\x00\x1f\x7f", Status: 400, Client: "c", User: "bob\" level=ERROR", HasUser: true},
		{Method: "GET", Path: "/caf\u00e9/\u2028/\u2029/\u00a0/\u200b", Status: 200, Client: "c", User: "ž", HasUser: true},
		{Method: "GET", Path: "/bad\xff\xfe/utf8\xc3", Status: 200, Client: "c"},
		{Method: "", Path: "", Status: 0, Client: ""},
		{Method: "GET", Path: `/only\backslash`, Status: 200, Client: "c", User: "<script>&", HasUser: true},
		{Method: "PROPFIND", Path: "/\u0085/\ufeff", Status: 405, Duration: time.Second, Client: "c"},
		{Method: "GET", Path: "/", Status: 200, ClientAddr: netip.MustParseAddr("192.0.2.7"), Client: "ignored"},
		{Method: "GET", Path: "/", Status: 200, ClientAddr: netip.MustParseAddr("2001:db8::1")},
		{Method: "GET", Path: "/", Status: 200, ClientAddr: netip.MustParseAddr("::ffff:192.0.2.7")},
		{Method: "GET", Path: "/", Status: 200, ClientAddr: netip.MustParseAddr("fe80::1%eth0")},
		{Method: "GET", Path: "/", Status: 200, ClientAddr: netip.MustParseAddr("fe80::1%a b=\"c\"")},
		{Method: "GET", Path: "/", Status: 200, ClientAddr: netip.MustParseAddr("fe80::1%a\"b")},
	}
	for _, f := range []Format{Text, JSON} {
		for _, tm := range times {
			for _, e := range entries {
				e.Time = tm
				want := slogLine(t, f, &e)
				if got := string(f.Append(nil, &e)); got != want {
					t.Errorf("format %d, %+v:\n got %q\nwant %q", f, e, got, want)
				}
			}
		}
	}
}

func FuzzLinesEqualSlog(f *testing.F) {
	f.Add("GET", "/api/backups", "alice", int64(1234567))
	f.Add("G T", "/\xff\"=\n", "\u2028", int64(-1))
	f.Fuzz(func(t *testing.T, method, path, user string, d int64) {
		e := Entry{Time: time.Unix(0, d).UTC(), Method: method, Path: path, Status: 200,
			Bytes: d, Duration: time.Duration(d), Client: path, User: user, HasUser: user != ""}
		for _, f := range []Format{Text, JSON} {
			if got, want := string(f.Append(nil, &e)), slogLine(t, f, &e); got != want {
				t.Fatalf("format %d:\n got %q\nwant %q", f, got, want)
			}
		}
	})
}

func TestAppendAllocs(t *testing.T) {
	e := Entry{Time: time.Now(), Method: "GET", Path: "/api/backups", Status: 200, Bytes: 123,
		Duration: 1234567, Client: "127.0.0.1", User: "alice", HasUser: true}
	buf := make([]byte, 0, 512)
	for _, f := range []Format{Text, JSON} {
		if n := testing.AllocsPerRun(100, func() { buf = f.Append(buf[:0], &e) }); n != 0 {
			t.Errorf("format %d: %v allocations per line, want 0", f, n)
		}
	}
	e.Client, e.ClientAddr = "", netip.MustParseAddr("2001:db8::1")
	for _, f := range []Format{Text, JSON} {
		if n := testing.AllocsPerRun(100, func() { buf = f.Append(buf[:0], &e) }); n != 0 {
			t.Errorf("format %d, ClientAddr: %v allocations per line, want 0", f, n)
		}
	}
	w := NewWriter(&bytes.Buffer{}, Text)
	w.out = discard{}
	if n := testing.AllocsPerRun(100, func() { w.Log(context.Background(), &e) }); n != 0 {
		t.Errorf("Writer.Log: %v allocations per line, want 0", n)
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

func BenchmarkAppend(b *testing.B) {
	e := Entry{Time: time.Now(), Method: "GET", Path: "/api/backups", Status: 200, Bytes: 123,
		Duration: 1234567, Client: "127.0.0.1", User: "alice", HasUser: true}
	for _, c := range []struct {
		name string
		log  Logger
	}{
		{"text", NewWriter(discard{}, Text)},
		{"json", NewWriter(discard{}, JSON)},
		{"slog-text", Slog{slog.New(slog.NewTextHandler(discard{}, nil))}},
		{"slog-json", Slog{slog.New(slog.NewJSONHandler(discard{}, nil))}},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					c.log.Log(context.Background(), &e)
				}
			})
		})
	}
}

// TestRFC3339MillisCached: the time formatted from the cached second is
// what AppendFormat writes, across seconds, zones and the years the cache
// does not take.
func TestRFC3339MillisCached(t *testing.T) {
	east := time.FixedZone("east", 5*3600+30*60)
	base := time.Date(2024, 3, 10, 23, 59, 58, 999_600_000, time.UTC)
	var times []time.Time
	for i := range 40 {
		d := time.Duration(i) * 137 * time.Millisecond
		times = append(times, base.Add(d), base.Add(d).In(east), base.Add(d).Local())
	}
	times = append(times, time.Date(-1, 1, 1, 0, 0, 0, 5e6, time.UTC), time.Date(12000, 1, 1, 0, 0, 0, 0, time.UTC))
	for _, tm := range times {
		got := string(appendRFC3339Millis([]byte("x"), tm))
		want := string(appendRFC3339MillisSlow([]byte("x"), tm))
		if got != want {
			t.Errorf("%v: %q, want %q", tm, got, want)
		}
	}
}
