package session

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/backupweb/backupweb/internal/attrs"
	"github.com/backupweb/backupweb/internal/testkit/benchtest"
)

// benchManager returns a manager on the real clock over the named store and
// the cookie of one live session.
func benchManager(b *testing.B, store string) (*Manager, *http.Cookie) {
	b.Helper()
	var st Store
	switch store {
	case "memory":
		st = NewMemoryStore(nil)
	case "file":
		fs, err := OpenFileStore(b.TempDir(), nil)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { fs.Close() })
		st = fs
	}
	m, err := NewManager(Options{Store: st, Key: testKey})
	if err != nil {
		b.Fatal(err)
	}
	w := httptest.NewRecorder()
	if _, err := m.Start(w, get(), Data{Username: "alice", Attrs: attrs.Of(map[string]string{"email": "alice@example.com"})}); err != nil {
		b.Fatal(err)
	}
	return m, cookieNamed(b, w, DefaultCookieName)
}

// BenchmarkLoad measures loading a valid session: cookie parsing, the id
// hash, the store lookup and the copies handed to the caller.
func BenchmarkLoad(b *testing.B) {
	for _, store := range []string{"memory", "file"} {
		b.Run(store, func(b *testing.B) {
			m, c := benchManager(b, store)
			r := get(c)
			b.ReportAllocs()
			for b.Loop() {
				if _, ok, err := m.Load(r); !ok || err != nil {
					b.Fatal("session lost")
				}
			}
		})
		b.Run(store+"/parallel", func(b *testing.B) {
			m, c := benchManager(b, store)
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				r := get(c)
				for pb.Next() {
					if _, ok, err := m.Load(r); !ok || err != nil {
						b.Error("session lost")
						return
					}
				}
			})
		})
	}
}

// BenchmarkRequest compares loopback HTTP requests, from parallel clients
// (benchtest), to a handler that checks nothing with one that loads the
// session first: the throughput goal is a ratio of at least 0.85.
func BenchmarkRequest(b *testing.B) {
	m, c := benchManager(b, "file")
	ok := func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") }
	handlers := []struct {
		name string
		h    http.HandlerFunc
	}{
		{"unprotected", ok},
		{"session", func(w http.ResponseWriter, r *http.Request) {
			if _, found, err := m.Load(r); !found || err != nil {
				http.Error(w, "unauthenticated", http.StatusUnauthorized)
				return
			}
			ok(w, r)
		}},
	}
	for _, h := range handlers {
		b.Run(h.name, func(b *testing.B) {
			benchtest.Loopback(b, h.h, "/", func(r *http.Request) { r.AddCookie(c) })
		})
	}
}
