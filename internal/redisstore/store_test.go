package redisstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/attrs"
	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/auth/passwordauth"
	"github.com/backupweb/backupweb/internal/auth/sessionauth"
	"github.com/backupweb/backupweb/internal/refusal"
	"github.com/backupweb/backupweb/internal/session"
	"github.com/backupweb/backupweb/internal/testkit"
	"github.com/backupweb/backupweb/internal/testkit/logtest"
	"github.com/backupweb/backupweb/internal/testkit/redistest"
	"github.com/backupweb/backupweb/internal/throttle"
)

// A Client is the whole of the shared state: the core's methods, the
// session store the session types find in it, and the failure counters
// the password types find in it.
var (
	_ auth.Shared                 = (*Client)(nil)
	_ sessionauth.SharedSessions  = (*Client)(nil)
	_ passwordauth.SharedCounters = (*Client)(nil)
)

// open returns a client of srv that is closed when the test ends.
func open(t testing.TB, cfg redistest.Config, log *slog.Logger) *Client {
	t.Helper()
	c, err := Open(Options(cfg), log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func record(user string, created time.Time, life time.Duration) session.Record {
	return session.Record{
		Data:    session.Data{Username: user, Type: "flask-login", Cred: "c1", Attrs: attrs.Of(map[string]string{"email": user + "@example.com"})},
		Created: created, LastSeen: created, CSRF: []byte("0123456789abcdef0123456789abcdef"), Expires: created.Add(life),
	}
}

// keys lists the keys under the test prefix with their time to live.
func keys(t *testing.T, c *Client) map[string]time.Duration {
	t.Helper()
	ctx := context.Background()
	ks, err := c.scan(ctx, c.prefix+"*")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]time.Duration{}
	for _, k := range ks {
		ms, err := c.rd().Do(ctx, c.rd().B().Pttl().Key(k).Build()).AsInt64()
		if err != nil {
			t.Fatal(err)
		}
		out[strings.TrimPrefix(k, c.prefix)] = time.Duration(ms) * time.Millisecond
	}
	return out
}

func TestStore(t *testing.T) { testStore(t, redistest.Start(t, redistest.Options{}).Config()) }

func testStore(t *testing.T, cfg redistest.Config) {
	c := open(t, cfg, nil)
	s := c.SessionStore().(*Store)
	ctx := context.Background()
	now := time.Now()

	if _, ok, err := s.Find(ctx, "nothing"); ok || err != nil {
		t.Fatalf("Find(unknown) = %v, %v", ok, err)
	}
	rec := record("alice", now, time.Hour)
	if err := s.Commit(ctx, "k1", rec); err != nil {
		t.Fatal(err)
	}
	got, ok, err := s.Find(ctx, "k1")
	if err != nil || !ok {
		t.Fatalf("Find = %v, %v", ok, err)
	}
	if got.Username != "alice" || got.Type != "flask-login" || got.Cred != "c1" || got.Attrs.Get("email") != "alice@example.com" ||
		!bytes.Equal(got.CSRF, rec.CSRF) || !got.Created.Equal(rec.Created.Round(time.Microsecond)) && got.Created.Sub(rec.Created).Abs() > time.Millisecond ||
		got.Expires.UnixMilli() != rec.Expires.UnixMilli() {
		t.Fatalf("Find = %+v, want %+v", got, rec)
	}
	// What Find returns is the caller's: changing it changes nothing stored.
	got.Attrs = got.Attrs.With("email", "mallory@example.com")
	got.CSRF[0] ^= 1
	if again, _, _ := s.Find(ctx, "k1"); again.Attrs.Get("email") != "alice@example.com" || !bytes.Equal(again.CSRF, rec.CSRF) {
		t.Fatal("a caller's change to a found record reached the store (or its cache)")
	}

	// Every key is under the prefix and expires: the session at its
	// deadline, the index no later than its last session.
	ks := keys(t, c)
	if d := ks["s:k1"]; d <= 59*time.Minute || d > time.Hour {
		t.Errorf("session key expires in %v, want about an hour (keys %v)", d, ks)
	}
	if d := ks["u:alice"]; d <= 59*time.Minute || d > time.Hour {
		t.Errorf("index expires in %v, want with its session (keys %v)", d, ks)
	}

	// Touch moves the deadline of the session and of its index...
	if err := s.Touch(ctx, "k1", now.Add(time.Minute), now.Add(2*time.Hour), nil); err != nil {
		t.Fatal(err)
	}
	// (Redis may invalidate the cached copy just after Touch returns: a
	// read in between sees the earlier activity, never a later one.)
	waitUntil(t, func() bool {
		got, _, _ = s.Find(ctx, "k1")
		return got.LastSeen.UnixMilli() == now.Add(time.Minute).UnixMilli() && got.Expires.UnixMilli() == now.Add(2*time.Hour).UnixMilli()
	})
	if d := keys(t, c)["u:alice"]; d <= 119*time.Minute {
		t.Errorf("index expires in %v after Touch, want with its session (2h)", d)
	}
	// ...and never brings back a deleted one.
	if err := s.Delete(ctx, "k1"); err != nil {
		t.Fatal(err)
	}
	if err := s.Touch(ctx, "k1", now, now.Add(time.Hour), nil); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := s.Find(ctx, "k1"); ok {
		t.Fatal("Touch brought a deleted session back")
	}
	if ks := keys(t, c); len(ks) != 0 {
		t.Errorf("after Delete, keys remain: %v", ks)
	}

	// A record past its deadline is not found, even before Redis drops it.
	if err := s.Commit(ctx, "old", record("alice", now.Add(-2*time.Hour), time.Hour)); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := s.Find(ctx, "old"); ok {
		t.Error("an expired record was found")
	}
	if err := s.Commit(ctx, "x", session.Record{Data: session.Data{Username: "a"}}); err == nil {
		t.Error("Commit accepted a record without an expiry")
	}
}

// TestLimitUserSameMillisecond: two sign-ins in the same millisecond, the
// one with the larger key older by a few microseconds: the limit ends the
// smaller key, whichever was committed first, as the stores in memory and
// in a file do.
func TestLimitUserSameMillisecond(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	ctx := context.Background()
	for i, order := range [][]string{{"k-a", "k-b"}, {"k-b", "k-a"}} {
		cfg := srv.Config()
		cfg.Prefix = fmt.Sprintf("tie%d:", i)
		s := open(t, cfg, nil).SessionStore().(*Store)
		at := time.Now().Truncate(time.Millisecond).Add(500 * time.Microsecond)
		created := map[string]time.Time{"k-b": at, "k-a": at.Add(3 * time.Microsecond)}
		for _, k := range order {
			if err := s.Commit(ctx, k, record("alice", created[k], time.Hour)); err != nil {
				t.Fatal(err)
			}
		}
		if n, err := s.LimitUser(ctx, "alice", 1); n != 1 || err != nil {
			t.Fatalf("LimitUser = %d, %v; want 1", n, err)
		}
		for k, want := range map[string]bool{"k-a": false, "k-b": true} {
			if _, ok, _ := s.Find(ctx, k); ok != want {
				t.Errorf("%s committed first: %s found = %v, want %v (the smaller key ends)", order[0], k, ok, want)
			}
		}
	}
}

func TestStoreUsers(t *testing.T) {
	testStoreUsers(t, redistest.Start(t, redistest.Options{}).Config())
}

func testStoreUsers(t *testing.T, cfg redistest.Config) {
	c := open(t, cfg, nil)
	s := c.SessionStore().(*Store)
	ctx := context.Background()
	now := time.Now()
	for i := range 5 {
		if err := s.Commit(ctx, fmt.Sprint("a", i), record("alice", now.Add(time.Duration(i)*time.Second), time.Hour)); err != nil {
			t.Fatal(err)
		}
	}
	s.Commit(ctx, "b0", record("bob", now, time.Hour))
	// One of alice's sessions is gone on its own: the limit counts live ones.
	if err := c.rd().Do(ctx, c.rd().B().Del().Key(c.key("s", "a4")).Build()).Error(); err != nil {
		t.Fatal(err)
	}
	n, err := s.LimitUser(ctx, "alice", 2)
	if err != nil || n != 2 {
		t.Fatalf("LimitUser = %d, %v; want 2 (four live, keep two)", n, err)
	}
	for key, want := range map[string]bool{"a0": false, "a1": false, "a2": true, "a3": true, "b0": true} {
		if _, ok, _ := s.Find(ctx, key); ok != want {
			t.Errorf("after LimitUser, %s found = %v, want %v (the oldest end first)", key, ok, want)
		}
	}
	n, err = s.DeleteUser(ctx, "alice")
	if err != nil || n != 2 {
		t.Fatalf("DeleteUser = %d, %v; want 2", n, err)
	}
	if _, ok, _ := s.Find(ctx, "a3"); ok {
		t.Error("a deleted user's session is still found")
	}
	if _, ok, _ := s.Find(ctx, "b0"); !ok {
		t.Error("another user's session ended")
	}
	// A user name is only a part of a key: odd names are kept apart.
	for _, name := range []string{"a:b", "a b", "ä*?[", ""} {
		if err := s.Commit(ctx, "odd"+name, record(name, now, time.Hour)); err != nil {
			t.Fatalf("Commit for %q: %v", name, err)
		}
	}
	if n, _ := s.DeleteUser(ctx, "a"); n != 0 {
		t.Errorf("DeleteUser(a) ended %d sessions of other users", n)
	}
}

// TestRevocationReachesOtherInstances: a session read (and cached) by one
// client is refused by it as soon as another client's Delete returns.
func TestRevocationReachesOtherInstances(t *testing.T) {
	testRevocationReachesOtherInstances(t, redistest.Start(t, redistest.Options{}).Config())
}

func testRevocationReachesOtherInstances(t *testing.T, cfg redistest.Config) {
	a, b := open(t, cfg, nil).SessionStore(), open(t, cfg, nil).SessionStore()
	ctx := context.Background()
	const trials = 200
	delays := make([]time.Duration, 0, trials)
	stale := 0
	for i := range trials {
		key := fmt.Sprint("r", i)
		if err := a.Commit(ctx, key, record("alice", time.Now(), time.Hour)); err != nil {
			t.Fatal(err)
		}
		for range 2 { // the second read is served from b's cache
			if _, ok, err := b.Find(ctx, key); !ok || err != nil {
				t.Fatalf("b.Find = %v, %v", ok, err)
			}
		}
		if err := a.Delete(ctx, key); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		for reads := 0; ; reads++ {
			_, ok, err := b.Find(ctx, key)
			if err != nil {
				t.Fatal(err)
			}
			if !ok {
				break
			}
			if reads == 0 {
				stale++
			}
			if time.Since(start) > 5*time.Second {
				t.Fatalf("trial %d: b still finds a session deleted by a after 5s", i)
			}
			// Requests reach an instance over the network, not in a
			// loop that never yields: give the connection's reader (and
			// the network poller) a chance, as serving requests does.
			time.Sleep(10 * time.Microsecond)
		}
		delays = append(delays, time.Since(start))
	}
	slices.Sort(delays)
	t.Logf("%d trials, from a's Delete returning to b refusing: p50 %v, p99 %v, max %v; %d trials saw one stale read",
		trials, delays[trials/2], delays[trials*99/100], delays[trials-1], stale)
}

func TestSpendOnce(t *testing.T) { testSpendOnce(t, redistest.Start(t, redistest.Options{}).Config()) }

func testSpendOnce(t *testing.T, cfg redistest.Config) {
	a, b := open(t, cfg, nil), open(t, cfg, nil)
	ctx := context.Background()
	if spent, err := b.Spent(ctx, "oauth-state", "s1"); spent || err != nil {
		t.Fatalf("Spent before any spend = %v, %v; want false", spent, err)
	}
	if ok, err := a.SpendOnce(ctx, "oauth-state", "s1", time.Minute); !ok || err != nil {
		t.Fatalf("first spend = %v, %v", ok, err)
	}
	if spent, err := b.Spent(ctx, "oauth-state", "s1"); !spent || err != nil {
		t.Fatalf("Spent after a spend, other instance = %v, %v; want true", spent, err)
	}
	if spent, _ := b.Spent(ctx, "other", "s1"); spent {
		t.Fatal("Spent: another kind shares the token")
	}
	if ok, err := b.SpendOnce(ctx, "oauth-state", "s1", time.Minute); ok || err != nil {
		t.Fatalf("second spend, other instance = %v, %v; want false", ok, err)
	}
	if ok, _ := b.SpendOnce(ctx, "other", "s1", time.Minute); !ok {
		t.Fatal("another kind shares the token")
	}
	for k, d := range keys(t, a) {
		if strings.Contains(k, "s1") {
			t.Errorf("the token itself is stored: %s", k)
		}
		if d <= 0 || d > time.Minute {
			t.Errorf("%s expires in %v, want within a minute", k, d)
		}
	}
}

// TestConnections: a password, an ACL user, TLS with a test CA and a unix
// socket all work; a wrong password and an unknown CA are refused as
// unavailable, never as an answer.
func TestConnections(t *testing.T) {
	ctx := context.Background()
	check := func(t *testing.T, cfg redistest.Config, wantOK bool) {
		t.Helper()
		c := open(t, cfg, slog.New(slog.DiscardHandler))
		err := c.SessionStore().Commit(ctx, "k", record("alice", time.Now(), time.Minute))
		if wantOK && err != nil {
			t.Fatalf("Commit: %v", err)
		}
		if !wantOK {
			if err == nil {
				t.Fatal("Commit succeeded, want a failure")
			}
			if !refusal.IsUnavailable(err) || !refusal.IsStoreDown(err) {
				t.Fatalf("error %v is not Unavailable and StoreDown", err)
			}
			if rp := refusal.ReplyTo(err); rp.Status != 503 || rp.Message != refusal.StoreNotAnswering.Message() {
				t.Fatalf("reply to %v: %d %q, want 503 saying the session store does not answer", err, rp.Status, rp.Message)
			}
			if strings.Contains(err.Error(), cfg.Password) && cfg.Password != "" {
				t.Fatalf("error %q holds the password", err)
			}
			return
		}
		if _, ok, err := c.SessionStore().Find(ctx, "k"); !ok || err != nil {
			t.Fatalf("Find = %v, %v", ok, err)
		}
	}
	t.Run("password", func(t *testing.T) {
		srv := redistest.Start(t, redistest.Options{Password: "s3cret-pass"})
		check(t, srv.Config(), true)
		cfg := srv.Config()
		cfg.Password = "wrong-pass"
		check(t, cfg, false)
	})
	t.Run("ACL user", func(t *testing.T) {
		srv := redistest.Start(t, redistest.Options{User: "backupweb", Password: "acl-pass"})
		check(t, srv.Config(), true)
	})
	t.Run("TLS", func(t *testing.T) {
		srv := redistest.Start(t, redistest.Options{TLS: true, Password: "tls-pass"})
		check(t, srv.Config(), true)
		cfg := srv.Config()
		cfg.TLSCA = "" // the system's roots do not know the test CA
		check(t, cfg, false)
	})
	t.Run("unix socket", func(t *testing.T) {
		srv := redistest.Start(t, redistest.Options{Unix: true})
		check(t, srv.Config(), true)
	})
}

// TestOutage: Redis stopped mid-run makes every operation fail as
// unavailable, with one error line; it recovers on its own when Redis
// comes back, with one info line; a Redis restarted empty knows no
// session, and nothing else breaks.
func TestOutage(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{Persist: true})
	var buf logtest.Buffer
	c := open(t, srv.Config(), slog.New(slog.NewTextHandler(&buf, nil)))
	s := c.SessionStore()
	ctx := context.Background()
	if err := s.Commit(ctx, "k", record("alice", time.Now(), time.Hour)); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := s.Find(ctx, "k"); !ok {
		t.Fatal("not found before the outage")
	}
	srv.Stop()
	// The connection's reader notices the server's end at once; until it
	// has (microseconds), a read may still come from the cache, as it
	// would have a moment before. From then on, nothing does.
	waitUntil(t, func() bool { _, _, err := s.Find(ctx, "k"); return err != nil })
	for i := range 5 {
		_, ok, err := s.Find(ctx, "k")
		if ok || !refusal.IsUnavailable(err) {
			t.Fatalf("during the outage, Find %d = %v, %v; want an Unavailable error (never a cached answer)", i, ok, err)
		}
		if _, err := c.Counter("x", throttle.Options{}).Acquire(ctx, "a"); !refusal.IsUnavailable(err) {
			t.Fatalf("Acquire during the outage = %v", err)
		}
		if _, err := c.SpendOnce(ctx, "k", "t", time.Minute); !refusal.IsUnavailable(err) {
			t.Fatalf("SpendOnce during the outage = %v", err)
		}
	}
	if err := c.Ping(ctx); err == nil {
		t.Fatal("Ping answered during the outage")
	}
	srv.Start()
	testkit.WaitUntil(t, 10*time.Second, func() bool { return strings.Contains(buf.String(), "answering again") },
		func() string { return "recovery not logged:\n" + buf.String() })
	if _, ok, err := s.Find(ctx, "k"); !ok || err != nil {
		t.Fatalf("after the restart (data kept), Find = %v, %v", ok, err)
	}
	if n := strings.Count(buf.String(), "level=ERROR"); n != 1 {
		t.Errorf("%d error lines for one outage, want 1:\n%s", n, buf.String())
	}
	if n := strings.Count(buf.String(), "level=INFO"); n != 1 {
		t.Errorf("%d info lines for one recovery, want 1:\n%s", n, buf.String())
	}

	// Restarted empty: the session is unknown (sign in again), and the
	// store works.
	srv.Stop()
	srv.Persist(false)
	srv.Start()
	var found bool
	var err error
	testkit.WaitUntil(t, 5*time.Second, func() bool {
		_, found, err = s.Find(ctx, "k")
		return err == nil
	}, func() string { return fmt.Sprintf("after a restart with no data, Find = %v", err) })
	if found {
		t.Fatalf("after a restart with no data, Find = %v, %v; want not found", found, err)
	}
	if err := s.Commit(ctx, "k2", record("alice", time.Now(), time.Hour)); err != nil {
		t.Fatalf("Commit after the empty restart: %v", err)
	}
}

// TestOpenWhileDown: a client opened while Redis is down works once Redis
// is up, without being opened again.
func TestOpenWhileDown(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	srv.Stop()
	var buf logtest.Buffer
	c := open(t, srv.Config(), slog.New(slog.NewTextHandler(&buf, nil)))
	if _, _, err := c.SessionStore().Find(context.Background(), "k"); !refusal.IsUnavailable(err) {
		t.Fatalf("Find while down = %v", err)
	}
	srv.Start()
	var err error
	testkit.WaitUntil(t, 10*time.Second, func() bool { _, _, err = c.SessionStore().Find(context.Background(), "k"); return err == nil },
		func() string { return fmt.Sprintf("still failing after Redis came up: %v", err) })
	if !strings.Contains(buf.String(), "not answering") {
		t.Errorf("the outage at start was not logged:\n%s", buf.String())
	}
	var e *Error
	_, err = Open(Options{URL: "rediss://localhost:1", TLSCA: "/nonexistent", CommandTimeout: time.Second}, nil)
	if err == nil || errors.As(err, &e) {
		t.Errorf("Open with a missing CA file = %v, want a configuration error", err)
	}
}

// waitUntil polls cond for up to 5 seconds.
func waitUntil(t *testing.T, cond func() bool) {
	t.Helper()
	testkit.WaitUntil(t, 5*time.Second, cond, func() string { return "condition not met" })
}

// TestRevokeUserWithoutIndex: `session revoke -user` ends a session that
// the user's index no longer names (its entry removed with ZREM), on
// every instance, through the user's generation; the session is then no
// longer listed, and a sign-in after it works.
func TestRevokeUserWithoutIndex(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	a, b, cmd := open(t, srv.Config(), nil), open(t, srv.Config(), nil), open(t, srv.Config(), nil)
	ctx := context.Background()
	ma, mb := aliceManager(t, a, 0), aliceManager(t, b, 0)
	signIn := func() *http.Cookie { return aliceSignsIn(t, ma) }
	loads := func(m *session.Manager, c *http.Cookie) bool { return sessionLoads(t, m, c) }
	cookie := signIn()
	for _, m := range []*session.Manager{ma, mb} {
		if !loads(m, cookie) {
			t.Fatal("the session does not load")
		}
	}
	// Remove the session from the user's index, as a tampered or
	// incomplete index would leave it.
	index := a.key("u", "alice")
	members, err := a.rd().Do(ctx, a.rd().B().Zrange().Key(index).Min("0").Max("-1").Build()).AsStrSlice()
	if err != nil || len(members) != 1 {
		t.Fatalf("the index holds %v, %v", members, err)
	}
	if err := a.rd().Do(ctx, a.rd().B().Zrem().Key(index).Member(members[0]).Build()).Error(); err != nil {
		t.Fatal(err)
	}

	// What `backupweb session revoke -user alice` does.
	n, err := cmd.SessionStore().(session.UserDeleter).DeleteUser(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the index named %d session(s)", n)
	for name, m := range map[string]*session.Manager{"a": ma, "b": mb} {
		waitUntil(t, func() bool { return !loads(m, cookie) })
		if list, err := m.Sessions(ctx, "alice", nil); err != nil || len(list) != 0 {
			t.Errorf("%s lists %v, %v", name, list, err)
		}
	}
	// Moved back by hand, the generation is refused, never read as 0.
	fresh := signIn()
	if !loads(mb, fresh) {
		t.Fatal("a session made after the revocation does not load")
	}
	if err := a.rd().Do(ctx, a.rd().B().Set().Key(a.key("g", "alice")).Value("x").Build()).Error(); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, func() bool {
		r := httptest.NewRequest("GET", "/", nil)
		r.AddCookie(fresh)
		_, ok, err := mb.Load(r)
		return !ok && err != nil
	})
}

// TestSessionOutsideIndexRefused: a session whose entry is removed from
// its user's index (ZREM) is refused on every instance, so it cannot
// escape max_sessions_per_user, which counts the index: after the limit's
// worth of new sign-ins, no more than the limit of the user's sessions
// load, the hidden one included.
func TestSessionOutsideIndexRefused(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	a, b := open(t, srv.Config(), nil), open(t, srv.Config(), nil)
	ctx := context.Background()
	const limit = 2
	ma, mb := aliceManager(t, a, limit), aliceManager(t, b, limit)
	signIn := func() *http.Cookie { return aliceSignsIn(t, ma) }
	loads := func(m *session.Manager, c *http.Cookie) bool { return sessionLoads(t, m, c) }
	hidden := signIn()
	for name, m := range map[string]*session.Manager{"a": ma, "b": mb} {
		if !loads(m, hidden) {
			t.Fatalf("%s: the session does not load", name)
		}
	}
	index := a.key("u", "alice")
	members, err := a.rd().Do(ctx, a.rd().B().Zrange().Key(index).Min("0").Max("-1").Build()).AsStrSlice()
	if err != nil || len(members) != 1 {
		t.Fatalf("the index holds %v, %v", members, err)
	}
	if err := a.rd().Do(ctx, a.rd().B().Zrem().Key(index).Member(members[0]).Build()).Error(); err != nil {
		t.Fatal(err)
	}
	// Refused on both instances, b having read it through its cache.
	for name, m := range map[string]*session.Manager{"a": ma, "b": mb} {
		waitUntil(t, func() bool { return !loads(m, hidden) })
		if list, err := m.Sessions(ctx, "alice", nil); err != nil || len(list) != 0 {
			t.Errorf("%s lists %v, %v", name, list, err)
		}
	}
	var later []*http.Cookie
	for range limit + 1 {
		later = append(later, signIn())
	}
	live := 0
	var seen []bool
	for _, c := range append(later, hidden) {
		ok := loads(mb, c)
		seen = append(seen, ok)
		if ok {
			live++
		}
	}
	if live != limit || seen[len(seen)-1] {
		t.Fatalf("alice's sessions, the hidden one last, load: %v; want %d of them, the hidden one not", seen, limit)
	}
}

// aliceManager is a flask-login session manager over c's store, with at
// most maxPerUser sessions a user (0: the manager's default).
func aliceManager(t *testing.T, c *Client, maxPerUser int) *session.Manager {
	t.Helper()
	m, err := session.NewManager(session.Options{Store: c.SessionStore(), Key: bytes.Repeat([]byte("k"), 32), Type: "flask-login", MaxPerUser: maxPerUser})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// aliceSignsIn starts a session of alice's with m and returns its cookie.
func aliceSignsIn(t *testing.T, m *session.Manager) *http.Cookie {
	t.Helper()
	w := httptest.NewRecorder()
	if _, err := m.Start(w, httptest.NewRequest("GET", "/", nil), session.Data{Username: "alice"}); err != nil {
		t.Fatal(err)
	}
	for _, c := range w.Result().Cookies() {
		if c.Name == m.CookieName() {
			return c
		}
	}
	t.Fatal("no session cookie")
	return nil
}

// sessionLoads reports whether m loads the session of cookie c.
func sessionLoads(t *testing.T, m *session.Manager, c *http.Cookie) bool {
	t.Helper()
	r := httptest.NewRequest("GET", "/", nil)
	r.AddCookie(c)
	_, ok, err := m.Load(r)
	if err != nil {
		t.Fatal(err)
	}
	return ok
}

// TestKeyParts: a key is the prefix and its parts joined by colons,
// whatever their number.
func TestKeyParts(t *testing.T) {
	c := &Client{prefix: "bw:"}
	for _, tc := range []struct {
		parts []string
		want  string
	}{
		{[]string{"s"}, "bw:s"},
		{[]string{"s", "KEY"}, "bw:s:KEY"},
		{[]string{"mark", "basic-known", "ID"}, "bw:mark:basic-known:ID"},
	} {
		if got := c.key(tc.parts...); got != tc.want {
			t.Errorf("key(%q) = %q, want %q", tc.parts, got, tc.want)
		}
	}
}
