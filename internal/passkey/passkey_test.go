package passkey

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-webauthn/webauthn/webauthn"

	"github.com/backupweb/backupweb/internal/once"
	"github.com/backupweb/backupweb/internal/session"
	"github.com/backupweb/backupweb/internal/testkit/clocktest"
)

var testKey = bytes.Repeat([]byte{7}, 32)

// memKeys is a Keys in memory, for tests.
type memKeys struct {
	mu      sync.Mutex
	handles map[string][]byte
	keys    map[string][]Passkey
}

func newMemKeys() *memKeys {
	return &memKeys{handles: map[string][]byte{}, keys: map[string][]Passkey{}}
}

func (m *memKeys) Handle(_ context.Context, user string, create bool) ([]byte, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	h, ok := m.handles[user]
	if !ok && create {
		h, ok = []byte("handle-of-"+user), true
		m.handles[user] = h
	}
	return h, ok, nil
}

func (m *memKeys) Owner(_ context.Context, handle []byte) (string, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for u, h := range m.handles {
		if bytes.Equal(h, handle) {
			return u, true, nil
		}
	}
	return "", false, nil
}

func (m *memKeys) Passkeys(_ context.Context, user string) ([]Passkey, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]Passkey(nil), m.keys[user]...), nil
}

// Stamp is the number of the user's passkeys, "" for none.
func (m *memKeys) Stamp(_ context.Context, user string) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.stampLocked(user), nil
}

func (m *memKeys) stampLocked(user string) string {
	if len(m.keys[user]) == 0 {
		return ""
	}
	return strconv.Itoa(len(m.keys[user]))
}

func (m *memKeys) AddPasskey(_ context.Context, user string, p Passkey, since string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.stampLocked(user) != since {
		return ErrFactorsChanged
	}
	m.keys[user] = append(m.keys[user], p)
	return nil
}

func (m *memKeys) RemovePasskey(context.Context, string, []byte) (bool, error) { return false, nil }

func (m *memKeys) UsePasskey(context.Context, string, webauthn.Credential, time.Time) error {
	return nil
}

func newService(t *testing.T, store session.Store, clock *clocktest.Clock) *Service {
	t.Helper()
	cs, err := NewCeremonies(store, testKey, nil, clock.Now)
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse("https://backups.example.com")
	s, err := New(Options{PublicURL: u, Keys: newMemKeys(), Ceremonies: cs, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestRPID drives the relying-party id rule.
func TestRPID(t *testing.T) {
	for _, tc := range []struct {
		url, want, msg string
	}{
		{url: "https://backups.example.com", want: "backups.example.com"},
		{url: "https://backups.example.com:8443", want: "backups.example.com"},
		{url: "http://localhost:8080", want: "localhost"},
		{url: "", msg: "public_url is not set"},
		{url: "http://127.0.0.1:8080", msg: "cannot be a passkey's relying-party id"},
		{url: "https://10.0.0.5", msg: "use a host name"},
	} {
		var u *url.URL
		if tc.url != "" {
			u, _ = url.Parse(tc.url)
		}
		got, err := RPID(u)
		if tc.want != "" {
			if err != nil || got != tc.want {
				t.Errorf("RPID(%s) = %q, %v; want %q", tc.url, got, err, tc.want)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.msg) || !strings.Contains(err.Error(), "https://") {
			t.Errorf("RPID(%s) = %q, %v; want an error saying %q and how to fix it", tc.url, got, err, tc.msg)
		}
		// A host that cannot be an id is an *RPIDError, whose Problem is
		// the sentence a configuration check shows at its key.
		var host *RPIDError
		if isHost := errors.As(err, &host); isHost != (u != nil) {
			t.Errorf("RPID(%s): an *RPIDError %v, want %v", tc.url, isHost, u != nil)
		} else if isHost && (strings.HasPrefix(host.Problem(), "passkey:") || !strings.Contains(host.Problem(), tc.msg)) {
			t.Errorf("RPID(%s): Problem() = %q", tc.url, host.Problem())
		}
	}
}

// TestBeginOptions checks what a registration offers the browser: this
// RP id, the user's handle (never the name as handle), no attestation,
// and the user's existing passkeys excluded.
func TestBeginOptions(t *testing.T) {
	clock := clocktest.New(time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC))
	s := newService(t, session.NewMemoryStore(clock.Now), clock)
	ctx := context.Background()
	s.o.Keys.AddPasskey(ctx, "alice", Passkey{Name: "old", Credential: webauthn.Credential{ID: []byte("old-id")}}, "")
	b, err := s.BeginRegistration(ctx, "alice", false)
	if err != nil {
		t.Fatal(err)
	}
	var opts struct {
		PublicKey struct {
			RP struct {
				ID string `json:"id"`
			} `json:"rp"`
			User struct {
				ID   string `json:"id"`
				Name string `json:"name"`
			} `json:"user"`
			Attestation string `json:"attestation"`
			Exclude     []struct {
				ID string `json:"id"`
			} `json:"excludeCredentials"`
		} `json:"publicKey"`
	}
	if err := json.Unmarshal(b.Options, &opts); err != nil {
		t.Fatal(err)
	}
	pk := opts.PublicKey
	if pk.RP.ID != "backups.example.com" || pk.User.Name != "alice" || pk.User.ID == "alice" || pk.Attestation != "none" || len(pk.Exclude) != 1 {
		t.Errorf("options %+v", pk)
	}
	if _, err := s.BeginLogin(ctx, "bob", "/"); err != ErrNoPasskeys {
		t.Errorf("BeginLogin for a user without passkeys: %v", err)
	}
}

// TestCeremonySingleUse checks that a ceremony is finished at most once,
// only as the kind and for the user it was begun for, only before it
// expires, and never after a writer of the store changed it.
func TestCeremonySingleUse(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		change func(clock *clocktest.Clock, store *session.MemoryStore, cs *Ceremonies, id string) string
		kind   string
		user   string
		ok     bool
	}{
		{name: "fresh", kind: kindLogin, user: "alice", ok: true},
		{name: "other kind", kind: kindRegister, user: "alice"},
		{name: "other user", kind: kindLogin, user: "bob"},
		{name: "unknown id", kind: kindLogin, user: "alice", change: func(_ *clocktest.Clock, _ *session.MemoryStore, _ *Ceremonies, id string) string {
			return strings.Repeat("A", len(id))
		}},
		{name: "malformed id", kind: kindLogin, user: "alice", change: func(*clocktest.Clock, *session.MemoryStore, *Ceremonies, string) string { return "x" }},
		{name: "expired", kind: kindLogin, user: "alice", change: func(clock *clocktest.Clock, _ *session.MemoryStore, _ *Ceremonies, id string) string {
			clock.Advance(CeremonyTTL)
			return id
		}},
		{name: "altered in the store", kind: kindLogin, user: "alice", change: func(_ *clocktest.Clock, store *session.MemoryStore, cs *Ceremonies, id string) string {
			key := cs.storeKey(id)
			rec, _, _ := store.Find(ctx, key)
			rec.Attrs = rec.Attrs.With(attrKey, strings.Replace(rec.Attrs.Get(attrKey), `"next":"/x"`, `"next":"/y"`, 1))
			store.Commit(ctx, key, rec)
			return id
		}},
		{name: "kept to the millisecond, as Redis keeps it", kind: kindLogin, user: "alice", ok: true, change: func(clock *clocktest.Clock, store *session.MemoryStore, cs *Ceremonies, _ string) string {
			clock.Advance(1234567 * time.Nanosecond)
			id, _ := cs.put(ctx, ceremony{Kind: kindLogin, User: "alice", Next: "/x"})
			rec, _, _ := store.Find(ctx, cs.storeKey(id))
			rec.Created, rec.LastSeen, rec.Expires = rec.Created.Truncate(time.Millisecond), rec.LastSeen.Truncate(time.Millisecond), rec.Expires.Truncate(time.Millisecond)
			store.Commit(ctx, cs.storeKey(id), rec)
			return id
		}},
		{name: "moved in the store", kind: kindLogin, user: "alice", change: func(_ *clocktest.Clock, store *session.MemoryStore, cs *Ceremonies, id string) string {
			other, _ := cs.put(ctx, ceremony{Kind: kindLogin, User: "alice"})
			rec, _, _ := store.Find(ctx, cs.storeKey(id))
			store.Commit(ctx, cs.storeKey(other), rec)
			return other
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := clocktest.New(time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC))
			store := session.NewMemoryStore(clock.Now)
			cs, err := NewCeremonies(store, testKey, nil, clock.Now)
			if err != nil {
				t.Fatal(err)
			}
			s := &Service{o: Options{Ceremonies: cs}}
			id, err := cs.put(ctx, ceremony{Kind: kindLogin, User: "alice", Next: "/x"})
			if err != nil {
				t.Fatal(err)
			}
			if tc.change != nil {
				id = tc.change(clock, store, cs, id)
			}
			c, v, err := s.take(ctx, id, tc.kind, tc.user)
			if err != nil || v.OK != tc.ok || tc.ok && c.Next != "/x" {
				t.Fatalf("take = %+v, %+v, %v; want ok %v", c, v, err, tc.ok)
			}
			if !tc.ok && v.Reason != ReasonNoCeremony {
				t.Errorf("reason %q", v.Reason)
			}
			if _, v, _ := s.take(ctx, id, tc.kind, tc.user); v.OK {
				t.Error("a ceremony was taken twice")
			}
		})
	}
}

// TestCeremonyRace takes one ceremony from many goroutines at once, with
// the spend function of a shared store: exactly one gets it.
func TestCeremonyRace(t *testing.T) {
	clock := clocktest.New(time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC))
	store := session.NewMemoryStore(clock.Now)
	var spends atomic.Int32
	local, err := once.New(once.Options{Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	spend := func(_ context.Context, key string, ttl time.Duration) (bool, error) {
		spends.Add(1)
		return local.Spend("ceremony", key, ttl)
	}
	cs, err := NewCeremonies(store, testKey, spend, clock.Now)
	if err != nil {
		t.Fatal(err)
	}
	id, err := cs.put(context.Background(), ceremony{Kind: kindDiscover})
	if err != nil {
		t.Fatal(err)
	}
	var won atomic.Int32
	var wg sync.WaitGroup
	for range 32 {
		wg.Go(func() {
			if _, ok, err := cs.take(context.Background(), id); err == nil && ok {
				won.Add(1)
			}
		})
	}
	wg.Wait()
	if won.Load() != 1 {
		t.Errorf("%d takes of one ceremony succeeded, want 1", won.Load())
	}
	if spends.Load() == 0 {
		t.Error("the spend function was never asked")
	}
}

// TestCeremoniesBounded: past MaxCeremonies begun within CeremonyTTL, a
// begin is refused with an error the web layer answers 503 (a full
// table), and nothing begun is forgotten for it; once the first expire,
// ceremonies begin again.
func TestCeremoniesBounded(t *testing.T) {
	clock := clocktest.New(time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC))
	cs, err := NewCeremonies(session.NewMemoryStore(clock.Now), testKey, nil, clock.Now)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	first, err := cs.put(ctx, ceremony{Kind: kindDiscover})
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i < MaxCeremonies; i++ {
		if _, err := cs.put(ctx, ceremony{Kind: kindDiscover}); err != nil {
			t.Fatalf("ceremony %d: %v", i, err)
		}
	}
	_, err = cs.put(ctx, ceremony{Kind: kindDiscover})
	var full interface{ TableFull() bool }
	if !errors.As(err, &full) || !full.TableFull() {
		t.Fatalf("a begin past the bound: %v, want a full table", err)
	}
	if _, ok, err := cs.take(ctx, first); err != nil || !ok {
		t.Fatalf("the first ceremony after the refusal: %v, %v", ok, err)
	}
	clock.Advance(CeremonyTTL)
	if _, err := cs.put(ctx, ceremony{Kind: kindDiscover}); err != nil {
		t.Fatalf("a begin once the first expired: %v", err)
	}
}
