package acmecert

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/acme/autocert"

	"github.com/backupweb/backupweb/internal/secretkey"
	"github.com/backupweb/backupweb/internal/testkit/certtest"
)

// memStore is a Store in memory, shared by the caches of a test as
// Redis is by instances. fail makes every call fail.
type memStore struct {
	mu    sync.Mutex
	recs  map[string][]byte
	ttls  map[string]time.Duration
	locks map[string]string
	fail  error
}

func newMemStore() *memStore {
	return &memStore{recs: map[string][]byte{}, ttls: map[string]time.Duration{}, locks: map[string]string{}}
}

func (m *memStore) ACMEGet(_ context.Context, name string) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail != nil {
		return nil, m.fail
	}
	return bytes.Clone(m.recs[name]), nil
}

func (m *memStore) ACMEPut(_ context.Context, name string, val []byte, ttl time.Duration) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail != nil {
		return m.fail
	}
	m.recs[name], m.ttls[name] = bytes.Clone(val), ttl
	return nil
}

func (m *memStore) ACMEDelete(_ context.Context, name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.recs, name)
	return m.fail
}

func (m *memStore) ACMELock(_ context.Context, name, token string, _ time.Duration) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail != nil {
		return false, m.fail
	}
	if holder, held := m.locks[name]; held && holder != token {
		return false, nil
	}
	m.locks[name] = token
	return true, nil
}

func (m *memStore) ACMEUnlock(_ context.Context, name, token string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.locks[name] == token {
		delete(m.locks, name)
	}
	return m.fail
}

func (m *memStore) ACMENames(context.Context) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for k := range m.recs {
		out = append(out, k)
	}
	return out, m.fail
}

func (m *memStore) held(name string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.locks[name]
	return ok
}

var (
	keyA = []byte(strings.Repeat("a", 32))
	keyB = []byte(strings.Repeat("b", 32))
)

func newCache(t *testing.T, st Store, current, previous []byte) *SharedCache {
	t.Helper()
	keys, err := secretkey.New(current, previous)
	if err != nil {
		t.Fatal(err)
	}
	c, err := NewSharedCache(st, keys, 30*24*time.Hour, nil)
	if err != nil {
		t.Fatal(err)
	}
	c.poll = time.Millisecond
	return c
}

// certRecord is a cache record of a certificate ending at notAfter, as
// autocert writes one (key, then chain).
func certRecord(t *testing.T, ca *certtest.CA, notAfter time.Time) []byte {
	l := ca.Issue(t, time.Now().Add(-time.Hour), notAfter, "backups.example.com")
	return append(l.KeyPEM, l.CertPEM...)
}

// TestSharedCacheSeals: what is stored opens only under the secret key
// and only under its own name; the store sees no private key; a record
// that does not open is an error, never a miss; the previous key still
// opens what it sealed.
func TestSharedCacheSeals(t *testing.T) {
	st := newMemStore()
	c := newCache(t, st, keyA, nil)
	ctx := context.Background()
	rec := certRecord(t, certtest.NewCA(t), time.Now().Add(90*24*time.Hour))
	if err := c.Put(ctx, "backups.example.com", rec); err != nil {
		t.Fatal(err)
	}
	if raw := st.recs["backups.example.com"]; bytes.Contains(raw, []byte("PRIVATE KEY")) || bytes.Contains(raw, []byte("CERTIFICATE")) {
		t.Fatal("the store holds the record in the clear")
	}
	got, err := c.Get(ctx, "backups.example.com")
	if err != nil || !bytes.Equal(got, rec) {
		t.Fatalf("Get: %v", err)
	}

	// Copied under another name, altered, or under another key: refused.
	st.recs["other.example.com"] = st.recs["backups.example.com"]
	if _, err := c.Get(ctx, "other.example.com"); err == nil || errors.Is(err, autocert.ErrCacheMiss) {
		t.Errorf("a record copied under another name: %v", err)
	}
	if _, err := newCache(t, st, keyB, nil).Get(ctx, "backups.example.com"); err == nil || errors.Is(err, autocert.ErrCacheMiss) {
		t.Errorf("a record under another key: %v", err)
	}
	altered := bytes.Clone(st.recs["backups.example.com"])
	altered[len(altered)-1] ^= 1
	st.recs["altered.example.com"] = altered
	if _, err := c.Get(ctx, "altered.example.com"); err == nil || errors.Is(err, autocert.ErrCacheMiss) {
		t.Errorf("an altered record: %v", err)
	}

	// A rotation: B current, A previous: A's record opens.
	if got, err := newCache(t, st, keyB, keyA).Get(ctx, "backups.example.com"); err != nil || !bytes.Equal(got, rec) {
		t.Errorf("under the previous key: %v", err)
	}

	// The store failing is an error, never a miss.
	st.fail = errors.New("redis down")
	if _, err := c.Get(ctx, "backups.example.com"); err == nil || errors.Is(err, autocert.ErrCacheMiss) {
		t.Errorf("store down: %v", err)
	}
}

// TestSharedCacheOneOrders: on a miss the first instance takes the lock
// and is told "miss" (it orders); a second instance waits and reads what
// the first stores; the lock is released by that store. Challenge records
// take no lock and expire.
func TestSharedCacheOneOrders(t *testing.T) {
	st := newMemStore()
	a, b := newCache(t, st, keyA, nil), newCache(t, st, keyA, nil)
	ctx := context.Background()
	for _, name := range []string{"backups.example.com", accountKey} {
		if _, err := a.Get(ctx, name); !errors.Is(err, autocert.ErrCacheMiss) {
			t.Fatalf("%s: first Get: %v, want a miss", name, err)
		}
		if !st.held(name) {
			t.Fatalf("%s: no lock after the first miss", name)
		}
		got := make(chan []byte, 1)
		go func() {
			d, err := b.Get(ctx, name)
			if err != nil {
				t.Error(err)
			}
			got <- d
		}()
		rec := certRecord(t, certtest.NewCA(t), time.Now().Add(90*24*time.Hour))
		if err := a.Put(ctx, name, rec); err != nil {
			t.Fatal(err)
		}
		if d := <-got; !bytes.Equal(d, rec) {
			t.Errorf("%s: the waiting instance read another record", name)
		}
		if st.held(name) {
			t.Errorf("%s: the lock is still held after the record was stored", name)
		}
	}

	// autocert's older name of the account key, read after a miss of
	// the new one: a miss without a lock.
	if _, err := b.Get(ctx, "acme_account.key"); !errors.Is(err, autocert.ErrCacheMiss) || st.held("acme_account.key") {
		t.Errorf("legacy account key: %v, locked %v", err, st.held("acme_account.key"))
	}

	// Challenges: a miss is a miss, no lock; stored with an expiry.
	if _, err := b.Get(ctx, "tok+http-01"); !errors.Is(err, autocert.ErrCacheMiss) || st.held("tok+http-01") {
		t.Errorf("challenge miss: %v, locked %v", err, st.held("tok+http-01"))
	}
	a.Put(ctx, "tok+http-01", []byte("key-authorization"))
	if d, err := b.Get(ctx, "tok+http-01"); err != nil || string(d) != "key-authorization" || st.ttls["tok+http-01"] != challengeTTL {
		t.Errorf("challenge: %q %v ttl %s", d, err, st.ttls["tok+http-01"])
	}
	if st.ttls["backups.example.com"] != 0 {
		t.Errorf("a certificate record expires: %s", st.ttls["backups.example.com"])
	}

	// The holder that failed to order and asks again holds the lock
	// still: told "miss" again, not made to wait on itself.
	if _, err := a.Get(ctx, "retry.example.com"); !errors.Is(err, autocert.ErrCacheMiss) {
		t.Fatal(err)
	}
	if _, err := a.Get(ctx, "retry.example.com"); !errors.Is(err, autocert.ErrCacheMiss) {
		t.Errorf("the holder asking again: %v, want a miss", err)
	}

	// A waiter gives up, with an error, when its context ends.
	if _, err := a.Get(ctx, "late.example.com"); !errors.Is(err, autocert.ErrCacheMiss) {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	if _, err := b.Get(short, "late.example.com"); err == nil || errors.Is(err, autocert.ErrCacheMiss) {
		t.Errorf("a waiter whose context ended: %v", err)
	}
}

// TestSharedCacheRenewal: a stored certificate within renewBefore of its
// end is ordered again by one instance (the lock holder is told "miss"),
// the others wait for the new one; one not yet due is read at once.
func TestSharedCacheRenewal(t *testing.T) {
	st := newMemStore()
	a, b := newCache(t, st, keyA, nil), newCache(t, st, keyA, nil)
	ctx := context.Background()
	ca := certtest.NewCA(t)
	fresh := certRecord(t, ca, time.Now().Add(60*24*time.Hour))
	if err := a.Put(ctx, "backups.example.com", fresh); err != nil {
		t.Fatal(err)
	}
	if d, err := b.Get(ctx, "backups.example.com"); err != nil || !bytes.Equal(d, fresh) || st.held("backups.example.com") {
		t.Fatalf("a certificate not due: %v, locked %v", err, st.held("backups.example.com"))
	}
	due := certRecord(t, ca, time.Now().Add(10*24*time.Hour))
	a.Put(ctx, "backups.example.com", due)
	if _, err := a.Get(ctx, "backups.example.com"); !errors.Is(err, autocert.ErrCacheMiss) {
		t.Fatalf("a due certificate: %v, want a miss for the instance that orders", err)
	}
	got := make(chan []byte, 1)
	go func() {
		d, err := b.Get(ctx, "backups.example.com")
		if err != nil {
			t.Error(err)
		}
		got <- d
	}()
	renewed := certRecord(t, ca, time.Now().Add(90*24*time.Hour))
	a.Put(ctx, "backups.example.com", renewed)
	if d := <-got; !bytes.Equal(d, renewed) {
		t.Error("the waiting instance did not read the renewed certificate")
	}
}

// TestSharedCacheReseal: rotate-secret's pass puts records of the
// previous key under the current one, leaves current ones, counts what
// opens under neither; a second pass finds everything current.
func TestSharedCacheReseal(t *testing.T) {
	st := newMemStore()
	ctx := context.Background()
	old := newCache(t, st, keyA, nil)
	old.Put(ctx, "backups.example.com", []byte("cert"))
	old.Put(ctx, accountKey, []byte("account"))
	st.recs["broken.example.com"] = []byte("not sealed at all, long enough")
	keys, _ := secretkey.New(keyB, keyA)
	counts, err := old.Reseal(ctx, keys)
	if err != nil || len(counts) != 1 || counts[0].Resealed != 2 || counts[0].Refused != 1 || counts[0].Current != 0 {
		t.Fatalf("first pass: %+v %v", counts, err)
	}
	if string(st.recs["broken.example.com"]) != "not sealed at all, long enough" {
		t.Error("a refused record was rewritten")
	}
	if d, err := newCache(t, st, keyB, nil).Get(ctx, accountKey); err != nil || string(d) != "account" {
		t.Errorf("under the new key alone: %q %v", d, err)
	}
	counts, err = old.Reseal(ctx, keys)
	if err != nil || counts[0].Current != 2 || counts[0].Resealed != 0 {
		t.Errorf("second pass: %+v %v", counts, err)
	}
}

// lockHook is a store that runs before once, just before the first lock
// is asked for.
type lockHook struct {
	*memStore
	once   sync.Once
	before func()
}

func (h *lockHook) ACMELock(ctx context.Context, name, token string, ttl time.Duration) (bool, error) {
	h.once.Do(h.before)
	return h.memStore.ACMELock(ctx, name, token, ttl)
}

// TestSharedCacheStoredBeforeTheLock: an instance that read a due
// certificate, while another stores the renewed one and gives its lock
// back before this one asks for it, reads the renewed certificate rather
// than ordering it a second time.
func TestSharedCacheStoredBeforeTheLock(t *testing.T) {
	st := newMemStore()
	ca := certtest.NewCA(t)
	renewed := certRecord(t, ca, time.Now().Add(90*24*time.Hour))
	a := newCache(t, st, keyA, nil)
	ctx := context.Background()
	h := &lockHook{memStore: st}
	b := newCache(t, h, keyA, nil)
	if err := a.Put(ctx, "backups.example.com", certRecord(t, ca, time.Now().Add(10*24*time.Hour))); err != nil {
		t.Fatal(err)
	}
	h.before = func() {
		if err := a.Put(ctx, "backups.example.com", renewed); err != nil {
			t.Error(err)
		}
	}
	d, err := b.Get(ctx, "backups.example.com")
	if err != nil || !bytes.Equal(d, renewed) {
		t.Fatalf("got %d bytes, %v; want the renewed certificate", len(d), err)
	}
	if st.held("backups.example.com") {
		t.Error("the lock is still held after the renewed certificate was read")
	}
}
