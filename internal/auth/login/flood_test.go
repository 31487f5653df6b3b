package login_test

import (
	"bytes"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/backupweb/backupweb/internal/auth/login"
	"github.com/backupweb/backupweb/internal/auth/secondfactor"
	"github.com/backupweb/backupweb/internal/auth/sessionauth"
	"github.com/backupweb/backupweb/internal/testkit"
	"github.com/backupweb/backupweb/internal/testkit/logintest"
	"github.com/backupweb/backupweb/internal/throttle"
)

// browserAt is a browser whose connections leave from the loopback
// address ip: the server sees it as another client.
func browserAt(h *logintest.Harness, ip string) *logintest.Browser {
	c := testkit.ClientFrom(ip)
	b := h.Browser()
	b.C, b.Jar = c, c.Jar
	return b
}

// floodBegins posts n passkey-only sign-in begins from b, from workers
// goroutines, and counts the answers by status (-1: a 429 without
// Retry-After, 0: a request that failed).
func floodBegins(b *logintest.Browser, token string, n, workers int) map[int]int {
	var mu sync.Mutex
	codes := map[int]int{}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < n; i += workers {
				req, _ := http.NewRequest(http.MethodPost, b.H.Srv.URL+secondfactor.PasskeyLoginBegin, strings.NewReader(`{"next":"/"}`))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json")
				req.Header.Set(sessionauth.CSRFHeader, token)
				req.Header.Set("Origin", b.H.Srv.URL)
				status := 0
				if resp, err := b.C.Do(req); err == nil {
					status = resp.StatusCode
					if status == http.StatusTooManyRequests && resp.Header.Get("Retry-After") == "" {
						status = -1
					}
					var sink bytes.Buffer
					sink.ReadFrom(resp.Body)
					resp.Body.Close()
				}
				mu.Lock()
				codes[status]++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return codes
}

// heapInUse is the live heap after a collection.
func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// TestBeginFloodBounded is the flood of issue 28: 20,000 passkey-only
// sign-in begins from one address over real HTTP on loopback get 429
// with Retry-After past the address's limit, and grow the heap by less
// than 16 MiB, while a browser at another address signs in with its
// password and second factor, and may begin a passkey sign-in, meanwhile.
// Nothing of the flood reaches the state directory's session journal.
func TestBeginFloodBounded(t *testing.T) {
	const n = 20_000
	h := logintest.NewFactors(t, login.SecondFactorOptional, func(c *login.Config) { c.PasskeyLogin = true })
	h.Enrol("alice")
	flood := browserAt(h, "127.0.0.2")
	token := flood.FormToken()
	before := heapInUse()
	done := make(chan map[int]int)
	go func() { done <- floodBegins(flood, token, n, 8) }()

	other := browserAt(h, "127.0.0.3")
	if r := other.PostJSON(secondfactor.PasskeyLoginBegin, other.FormToken(), []byte(`{"next":"/"}`)); r.Status != http.StatusOK {
		t.Errorf("a passkey begin from another address during the flood: %d %s", r.Status, r.Body)
	}
	if r := other.Login("alice", logintest.Passwords["alice"], "/"); r.Status != http.StatusSeeOther || !strings.HasPrefix(r.Header.Get("Location"), secondfactor.SecondFactorPath) {
		t.Errorf("password from another address during the flood: %d", r.Status)
	} else if r := other.SecondFactor(h.Code(), "/"); r.Status != http.StatusSeeOther || other.APIStatus() != http.StatusOK {
		t.Errorf("second factor from another address during the flood: %d", r.Status)
	}

	codes := <-done
	grown := int64(heapInUse()) - int64(before)
	t.Logf("answers %v; heap grew by %d KiB", codes, grown/1024)
	if codes[http.StatusOK] != throttle.DefaultRatePerKey || codes[http.StatusTooManyRequests] != n-throttle.DefaultRatePerKey {
		t.Errorf("answers to the flood: %v; want %d begun, the rest 429 with Retry-After", codes, throttle.DefaultRatePerKey)
	}
	if grown > 16<<20 {
		t.Errorf("the flood grew the heap by %d MiB, more than 16", grown>>20)
	}
	h.Stop()
	err := filepath.WalkDir(h.Env.StateDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err == nil && bytes.Contains(b, []byte(":webauthn-ceremony")) {
			t.Errorf("%s holds a ceremony", path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestBeginTotalLimited: begins from many addresses, each within its own
// limit, reach the total; then every address is answered 429, and the
// log says so once.
func TestBeginTotalLimited(t *testing.T) {
	h := logintest.NewFactors(t, login.SecondFactorOptional, func(c *login.Config) { c.PasskeyLogin = true })
	codes := map[int]int{}
	for i := 0; codes[http.StatusOK] < throttle.DefaultRateTotal; i++ {
		b := browserAt(h, "127.0.1."+strconv.Itoa(i+1))
		for status, n := range floodBegins(b, b.FormToken(), throttle.DefaultRatePerKey, 1) {
			codes[status] += n
		}
	}
	if codes[http.StatusOK] != throttle.DefaultRateTotal || codes[http.StatusTooManyRequests] != 0 {
		t.Fatalf("answers before the total: %v", codes)
	}
	late := browserAt(h, "127.0.2.1")
	if got := floodBegins(late, late.FormToken(), 1, 1); got[http.StatusTooManyRequests] != 1 {
		t.Fatalf("a new address past the total: %v, want 429 with Retry-After", got)
	}
	if n := strings.Count(h.Logs.String(), "too many passkey sign-ins begun from every address together"); n != 1 {
		t.Errorf("%d warnings about the total, want 1:\n%s", n, h.Logs.String())
	}
}

// TestSecondStepBeginsLimited: the passkey begins of the second step,
// for a browser that gave a right password and is not signed in yet, are
// limited per client address like the passkey-only sign-in's.
func TestSecondStepBeginsLimited(t *testing.T) {
	h := logintest.NewFactors(t, login.SecondFactorOptional, nil)
	h.Enrol("alice")
	b := h.PasswordGiven("alice")
	var last logintest.Reply
	for i := range throttle.DefaultRatePerKey + 1 {
		last = b.PostJSON(secondfactor.SecondFactorPasskeyBegin, b.Token, []byte(`{"next":"/"}`))
		if i < throttle.DefaultRatePerKey && last.Status != http.StatusUnauthorized {
			t.Fatalf("begin %d (alice has no passkey): %d %s", i, last.Status, last.Body)
		}
	}
	if last.Status != http.StatusTooManyRequests || last.Header.Get("Retry-After") == "" {
		t.Fatalf("a begin past the limit: %d %s", last.Status, last.Body)
	}
}
