package web

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/auth/none"
	"github.com/backupweb/backupweb/internal/catalog"
)

func readAll(resp *http.Response) ([]byte, error) {
	defer resp.Body.Close()
	return io.ReadAll(resp.Body)
}

func TestContentDisposition(t *testing.T) {
	tests := []struct {
		name, want string
	}{
		{"plain.tar.gz", `attachment; filename="plain.tar.gz"`},
		{"with space;comma,.tar", `attachment; filename="with space;comma,.tar"`},
		{`say "hi".tar`, `attachment; filename="say _hi_.tar"; filename*=UTF-8''say%20%22hi%22.tar`},
		{`back\slash`, `attachment; filename="back_slash"; filename*=UTF-8''back%5Cslash`},
		{"100%.tar", `attachment; filename="100_.tar"; filename*=UTF-8''100%25.tar`},
		{"ünïcødé.tar", `attachment; filename="_n_c_d_.tar"; filename*=UTF-8''%C3%BCn%C3%AFc%C3%B8d%C3%A9.tar`},
		{"バックアップ.tar", `attachment; filename="______.tar"; filename*=UTF-8''%E3%83%90%E3%83%83%E3%82%AF%E3%82%A2%E3%83%83%E3%83%97.tar`},
		{"new\nline\r.tar", `attachment; filename="new_line_.tar"; filename*=UTF-8''new_line_.tar`},
		{"tab\tdel\x7f", `attachment; filename="tab_del_"; filename*=UTF-8''tab_del_`},
		{"bad\xffutf8", `attachment; filename="bad_utf8"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := contentDisposition(tt.name)
			if got != tt.want {
				t.Fatalf("contentDisposition(%q)\n got %s\nwant %s", tt.name, got, tt.want)
			}
			if strings.ContainsAny(got, "\r\n\x00") {
				t.Fatal("header value holds a line break")
			}
			// Go's own parser must read it, and filename* must decode
			// to the exact name when the name was valid and printable.
			disp, params, err := mime.ParseMediaType(got)
			if err != nil || disp != "attachment" || params["filename"] == "" {
				t.Fatalf("ParseMediaType: %q %v %v", disp, params, err)
			}
		})
	}
}

// server serves the handler for type none over a folder holding odd names.
func downloadServer(t *testing.T) (*httptest.Server, string) {
	t.Helper()
	dir := fixture(t)
	for _, n := range []string{`say "hi".tar`, "ünï.tar", "new\nline.tar", "100%.tar", "a?b#c.tar"} {
		writeBackup(t, dir, n, "odd:"+n, base)
	}
	log, _ := quietLogger()
	srv := httptest.NewServer(NewHandler(Options{Provider: none.Provider{}, Catalog: catalog.New(dir), Logger: log}))
	t.Cleanup(srv.Close)
	return srv, dir
}

func TestDownloadOddNames(t *testing.T) {
	srv, _ := downloadServer(t)
	for _, name := range []string{`say "hi".tar`, "ünï.tar", "new\nline.tar", "100%.tar", "a?b#c.tar"} {
		t.Run(name, func(t *testing.T) {
			resp, err := srv.Client().Get(srv.URL + "/backups/" + url.PathEscape(name))
			if err != nil {
				t.Fatal(err)
			}
			body, _ := readAll(resp)
			if resp.StatusCode != 200 || string(body) != "odd:"+name {
				t.Fatalf("%d %q", resp.StatusCode, body)
			}
			cd := resp.Header.Get("Content-Disposition")
			if cd != contentDisposition(name) || strings.ContainsAny(cd, "\n\r") {
				t.Errorf("Content-Disposition = %q", cd)
			}
		})
	}
}

// lastModified is the Last-Modified a download of rel in dir must carry:
// the later of the file's modification and change times.
func lastModified(t *testing.T, dir, rel string) string {
	t.Helper()
	cat := catalog.New(dir)
	defer cat.Close()
	f, b, err := cat.Open(rel)
	must(t, err)
	f.Close()
	if b.LastChanged().Before(b.Modified) || b.LastChanged().Before(b.Changed) {
		t.Fatalf("LastChanged %v is earlier than the modification time %v or the change time %v", b.LastChanged(), b.Modified, b.Changed)
	}
	return b.LastChanged().UTC().Format(http.TimeFormat)
}

func TestDownloadHeadersRangesAndConditionals(t *testing.T) {
	srv, dir := downloadServer(t)
	target := srv.URL + "/backups/weekly%202024-05-01.tar.zst"
	lastMod := lastModified(t, dir, "weekly 2024-05-01.tar.zst")
	tests := []struct {
		name, method string
		header       map[string]string
		status       int
		body         string
		check        map[string]string
	}{
		{"full", "GET", nil, 200, "weekly full", map[string]string{
			"Content-Type": "application/octet-stream", "Content-Length": "11", "Last-Modified": lastMod,
			"Accept-Ranges": "bytes", "Content-Disposition": `attachment; filename="weekly 2024-05-01.tar.zst"`,
			"Cache-Control": "no-store", "X-Content-Type-Options": "nosniff",
		}},
		{"head", "HEAD", nil, 200, "", map[string]string{"Content-Length": "11", "Last-Modified": lastMod,
			"Content-Type": "application/octet-stream"}},
		{"range", "GET", map[string]string{"Range": "bytes=7-"}, 206, "full", map[string]string{
			"Content-Range": "bytes 7-10/11", "Content-Length": "4"}},
		{"range from end", "GET", map[string]string{"Range": "bytes=-4"}, 206, "full", nil},
		{"if-range stale", "GET", map[string]string{"Range": "bytes=7-", "If-Range": base.Format(http.TimeFormat)}, 200, "weekly full", nil},
		{"unsatisfiable", "GET", map[string]string{"Range": "bytes=50-"}, 416, "", nil},
		// A date is no validator: it can be set back and counts seconds.
		{"not modified by date", "GET", map[string]string{"If-Modified-Since": lastMod}, 200, "weekly full", nil},
		{"if-range date", "GET", map[string]string{"Range": "bytes=7-", "If-Range": lastMod}, 200, "weekly full", nil},
		{"modified since", "GET", map[string]string{"If-Modified-Since": base.Format(http.TimeFormat)}, 200, "weekly full", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest(tt.method, target, nil)
			for k, v := range tt.header {
				req.Header.Set(k, v)
			}
			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := readAll(resp)
			if resp.StatusCode != tt.status {
				t.Fatalf("status = %d, want %d", resp.StatusCode, tt.status)
			}
			if tt.body != "" && string(body) != tt.body {
				t.Errorf("body = %q, want %q", body, tt.body)
			}
			if tt.method == "HEAD" && len(body) != 0 {
				t.Error("HEAD with a body")
			}
			for k, v := range tt.check {
				if got := resp.Header.Get(k); got != v {
					t.Errorf("%s = %q, want %q", k, got, v)
				}
			}
		})
	}
}

// TestLargeDownload sends a file several chunks long through a real
// connection (sendfile path) and a range of it.
func TestLargeDownload(t *testing.T) {
	srv, dir := downloadServer(t)
	data := make([]byte, 3*downloadChunk+12345)
	rand.Read(data)
	must(t, os.WriteFile(filepath.Join(dir, "big.bin"), data, 0o600))

	resp, err := srv.Client().Get(srv.URL + "/backups/big.bin")
	if err != nil {
		t.Fatal(err)
	}
	got, err := readAll(resp)
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("full download: %d bytes of %d, err %v", len(got), len(data), err)
	}
	req, _ := http.NewRequest("GET", srv.URL+"/backups/big.bin", nil)
	req.Header.Set("Range", "bytes=1000-2500000")
	resp, err = srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	got, err = readAll(resp)
	if err != nil || resp.StatusCode != 206 || !bytes.Equal(got, data[1000:2500001]) {
		t.Fatalf("range: status %d, %d bytes, err %v", resp.StatusCode, len(got), err)
	}
}

// deadlineRecorder is a ResponseWriter that records the write deadlines
// set on it and the pieces written, and can act as a ReaderFrom.
type deadlineRecorder struct {
	*httptest.ResponseRecorder
	deadlines []time.Time
	pieces    []int64
}

func (d *deadlineRecorder) SetWriteDeadline(t time.Time) error {
	d.deadlines = append(d.deadlines, t)
	return nil
}

func (d *deadlineRecorder) ReadFrom(src io.Reader) (int64, error) {
	n, err := io.Copy(writerOnly{d.ResponseRecorder}, src)
	d.pieces = append(d.pieces, n)
	return n, err
}

func TestStallWriterMovesDeadlinePerPiece(t *testing.T) {
	clock := base
	now := func() time.Time { clock = clock.Add(time.Second); return clock }
	tests := []struct {
		name   string
		src    func(data []byte) io.Reader
		pieces []int64
	}{
		{"limited reader", func(d []byte) io.Reader { return &io.LimitedReader{R: bytes.NewReader(d), N: 25} }, []int64{10, 10, 5}},
		{"limited reader longer than data", func(d []byte) io.Reader { return &io.LimitedReader{R: bytes.NewReader(d), N: 100} }, []int64{10, 10, 10, 0}},
		{"plain reader", func(d []byte) io.Reader { return bytes.NewReader(d) }, []int64{10, 10, 10, 0}},
		{"exact multiple", func(d []byte) io.Reader { return &io.LimitedReader{R: bytes.NewReader(d), N: 20} }, []int64{10, 10}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := []byte("0123456789abcdefghijABCDEFGHIJ")
			rec := &deadlineRecorder{ResponseRecorder: httptest.NewRecorder()}
			w := &stallWriter{ResponseWriter: rec, rc: http.NewResponseController(rec), now: now, chunk: 10, stall: time.Minute}
			n, err := w.ReadFrom(tt.src(data))
			var want int64
			for _, p := range tt.pieces {
				want += p
			}
			if err != nil || n != want || rec.Body.String() != string(data[:want]) {
				t.Fatalf("ReadFrom = %d, %v; body %q", n, err, rec.Body.String())
			}
			if len(rec.pieces) != len(tt.pieces) {
				t.Fatalf("pieces = %v, want %v", rec.pieces, tt.pieces)
			}
			for i := range tt.pieces {
				if rec.pieces[i] != tt.pieces[i] {
					t.Fatalf("pieces = %v, want %v", rec.pieces, tt.pieces)
				}
			}
			if len(rec.deadlines) != len(tt.pieces) {
				t.Fatalf("%d deadlines for %d pieces", len(rec.deadlines), len(tt.pieces))
			}
			for i := 1; i < len(rec.deadlines); i++ {
				if !rec.deadlines[i].After(rec.deadlines[i-1]) {
					t.Fatalf("deadline did not move forward: %v", rec.deadlines)
				}
			}
		})
	}
}

func TestStallWriterWriteSplitsLargeWrites(t *testing.T) {
	rec := &deadlineRecorder{ResponseRecorder: httptest.NewRecorder()}
	w := &stallWriter{ResponseWriter: rec, rc: http.NewResponseController(rec), now: time.Now, chunk: 4, stall: time.Minute}
	n, err := w.Write([]byte("0123456789"))
	if err != nil || n != 10 || rec.Body.String() != "0123456789" {
		t.Fatalf("Write = %d, %v; %q", n, err, rec.Body.String())
	}
	if len(rec.deadlines) != 3 {
		t.Fatalf("%d deadlines, want 3", len(rec.deadlines))
	}
	if got := w.Unwrap(); got != rec {
		t.Fatal("Unwrap does not return the wrapped writer")
	}
}

// TestDownloadRewrittenInPlace: a backup rewritten in place, with the same
// size, keeps nothing that vouched for the old bytes. Its ETag changes even
// when its modification time is set back to the very nanosecond or stays
// in the same second, so If-None-Match with the old one gets the new bytes
// and If-Range with the old one the whole new file, never old bytes
// spliced with new ones. Last-Modified never goes back. A checksum file
// written before the rewrite is reported stale, not sent as Repr-Digest,
// even when the modification time was set back under it; one written
// after it is sent.
func TestDownloadRewrittenInPlace(t *testing.T) {
	const oldBytes, newBytes = "old bytes, 24 of them...", "NEW BYTES, 24 OF THEM!!!"
	oldSum, newSum := sha256.Sum256([]byte(oldBytes)), sha256.Sum256([]byte(newBytes))
	oldDigest := "sha-256=:" + base64.StdEncoding.EncodeToString(oldSum[:]) + ":"
	newDigest := "sha-256=:" + base64.StdEncoding.EncodeToString(newSum[:]) + ":"
	sumsAt := base.Add(time.Minute)
	for _, tt := range []struct {
		name    string
		mtime   time.Time // the modification time set after the rewrite; zero: left as the write made it
		newSums bool      // SHA256SUMS is written again, with the new digest and its old time, after the rewrite
		stale   bool      // the checksum is stale after the rewrite
	}{
		{"time set back", base, false, true},
		{"same second", base.Add(500 * time.Millisecond), false, true},
		{"time moved", time.Time{}, false, true},
		{"time set back, checksum written again", base, true, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeBackup(t, dir, "b.tar", oldBytes, base)
			writeBackup(t, dir, "SHA256SUMS", hex.EncodeToString(oldSum[:])+"  b.tar\n", sumsAt)
			log, _ := quietLogger()
			cat := catalog.New(dir)
			t.Cleanup(func() { cat.Close() })
			srv := httptest.NewServer(NewHandler(Options{Provider: none.Provider{}, Catalog: cat, Logger: log}))
			t.Cleanup(srv.Close)
			target := srv.URL + "/backups/b.tar"

			res, body := get(t, nil, target, nil)
			etag, lastMod := res.Header.Get("ETag"), res.Header.Get("Last-Modified")
			if res.StatusCode != 200 || body != oldBytes || etag == "" || res.Header.Get("Repr-Digest") != oldDigest || res.Header.Get(checksumHeader) != "" {
				t.Fatalf("before: %d %q %v", res.StatusCode, body, res.Header)
			}
			p := filepath.Join(dir, "b.tar")
			before, err := os.Stat(p)
			must(t, err)
			sums, err := os.Stat(filepath.Join(dir, "SHA256SUMS"))
			must(t, err)
			changedBefore, sumsChanged := changeTime(t, p), changeTime(t, filepath.Join(dir, "SHA256SUMS"))

			// The same file, the same size, other bytes. The file
			// system's clock counts in ticks of a few milliseconds:
			// the rewrite is repeated until its change time is past
			// the checksum file's and the old one, which is what a
			// rewrite a moment later is.
			rewritten := time.Now().Add(-time.Second).Truncate(time.Second)
			for i := 0; ; i++ {
				f, err := os.OpenFile(p, os.O_WRONLY, 0)
				must(t, err)
				_, err = f.WriteAt([]byte(newBytes), 0)
				must(t, err)
				must(t, f.Close())
				if !tt.mtime.IsZero() {
					must(t, os.Chtimes(p, tt.mtime, tt.mtime))
				}
				if c := changeTime(t, p); c.After(sumsChanged) && c.After(changedBefore) {
					break
				}
				if i == 1000 {
					t.Fatal("the file's change time does not move on a rewrite")
				}
				time.Sleep(time.Millisecond)
			}
			if tt.newSums {
				writeBackup(t, dir, "SHA256SUMS", hex.EncodeToString(newSum[:])+"  b.tar\n", sumsAt)
			}
			after, err := os.Stat(p)
			must(t, err)
			if !os.SameFile(before, after) || after.Size() != before.Size() || after.ModTime().Unix() != before.ModTime().Unix() && !tt.mtime.IsZero() ||
				tt.mtime.Equal(base) && !after.ModTime().Equal(before.ModTime()) || !sums.ModTime().After(after.ModTime()) && !tt.mtime.IsZero() {
				t.Fatalf("the rewrite is not what the test means: %v %v", before, after)
			}

			res, body = get(t, nil, target, map[string]string{"If-None-Match": etag})
			newTag := res.Header.Get("ETag")
			if res.StatusCode != 200 || body != newBytes || newTag == etag || newTag == "" {
				t.Errorf("If-None-Match with the old ETag: %d %q %q", res.StatusCode, body, newTag)
			}
			if lm, err := http.ParseTime(res.Header.Get("Last-Modified")); err != nil || lm.Before(rewritten) {
				t.Errorf("Last-Modified %q (before the rewrite %q), want the rewrite's time, %v or later", res.Header.Get("Last-Modified"), lastMod, rewritten)
			}
			res, body = get(t, nil, target, map[string]string{"Range": "bytes=10-", "If-Range": etag})
			if res.StatusCode != 200 || body != newBytes {
				t.Errorf("If-Range with the old ETag: %d %q, want the whole new file", res.StatusCode, body)
			}
			res, body = get(t, nil, target, map[string]string{"Range": "bytes=10-", "If-Range": newTag})
			if res.StatusCode != http.StatusPartialContent || body != newBytes[10:] {
				t.Errorf("If-Range with the new ETag: %d %q", res.StatusCode, body)
			}
			if res, _ := get(t, nil, target, map[string]string{"If-None-Match": newTag}); res.StatusCode != http.StatusNotModified {
				t.Errorf("If-None-Match with the new ETag: %d", res.StatusCode)
			}
			digest, stale := res.Header.Get("Repr-Digest"), res.Header.Get(checksumHeader)
			switch {
			case tt.stale && (digest != "" || stale != "stale"):
				t.Errorf("a checksum written before the rewrite: Repr-Digest %q, %s %q, want none and stale", digest, checksumHeader, stale)
			case !tt.stale && (digest != newDigest || stale != ""):
				t.Errorf("a checksum written after the rewrite: Repr-Digest %q, %s %q, want %q", digest, checksumHeader, stale, newDigest)
			}
		})
	}
}
