package redisstore

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/refusal"
	"github.com/backupweb/backupweb/internal/testkit/redistest"
)

// drill is what a failover must not lose, written through instance a
// before the fault and checked through instance b after it.
type drill struct {
	a, b         *Client
	live, ended  string // session keys: one acknowledged, one acknowledged then revoked
	gone         string // a session of a user whose sessions were all ended
	code         string // a TOTP step spent on a
	acknowledged time.Time
}

// prepare writes, through a, a live session, a revoked one, a user's
// sessions ended, and a spent TOTP step, each acknowledged (confirmed
// by a replica) before it returns.
func prepare(t *testing.T, a, b *Client, live, ended, gone string) *drill {
	t.Helper()
	ctx := context.Background()
	now := time.Now()
	sa := a.SessionStore().(*Store)
	for _, step := range []struct {
		what string
		err  error
	}{
		{"sign-in", sa.Commit(ctx, live, record("alice", now, time.Hour))},
		{"sign-in to revoke", sa.Commit(ctx, ended, record("alice", now, time.Hour))},
		{"sign-out", sa.Delete(ctx, ended)},
		{"carol's sign-in", sa.Commit(ctx, gone, record("carol", now, time.Hour))},
	} {
		if step.err != nil {
			t.Fatalf("%s before the fault: %v", step.what, step.err)
		}
	}
	if _, err := sa.DeleteUser(ctx, "carol"); err != nil {
		t.Fatalf("ending carol's sessions before the fault: %v", err)
	}
	d := &drill{a: a, b: b, live: live, ended: ended, gone: gone, code: "alice:" + fmt.Sprint(now.UnixNano())}
	if ok, err := a.SpendOnce(ctx, "totp-step", d.code, 2*time.Minute); !ok || err != nil {
		t.Fatalf("spending a TOTP step on a = %v, %v", ok, err)
	}
	d.acknowledged = time.Now()
	return d
}

// load is a session check at 32 connections through the two instances
// while the fault lasts: a right session, and one revoked before it.
type load struct {
	ok, unavailable, signedOut, admitted, otherErr atomic.Int64
	stop                                           chan struct{}
	wg                                             sync.WaitGroup
}

func (d *drill) startLoad(conns int) *load {
	l := &load{stop: make(chan struct{})}
	for i := range conns {
		c := d.a
		if i%2 == 1 {
			c = d.b
		}
		s := c.SessionStore()
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			ctx := context.Background()
			for {
				select {
				case <-l.stop:
					return
				default:
				}
				_, ok, err := s.Find(ctx, d.live)
				switch {
				case err != nil && refusal.ReplyTo(err).Status == 503 && refusal.IsUnavailable(err):
					l.unavailable.Add(1)
				case err != nil:
					l.otherErr.Add(1)
				case !ok:
					l.signedOut.Add(1)
				default:
					l.ok.Add(1)
				}
				if _, ok, _ := s.Find(ctx, d.ended); ok {
					l.admitted.Add(1)
				}
				time.Sleep(2 * time.Millisecond)
			}
		}()
	}
	return l
}

func (l *load) finish(t *testing.T) {
	t.Helper()
	close(l.stop)
	l.wg.Wait()
	t.Logf("session checks at 32 connections through two instances during the fault: %d found, %d unavailable (503 with Retry-After), %d signed out, %d revoked sessions admitted, %d other errors",
		l.ok.Load(), l.unavailable.Load(), l.signedOut.Load(), l.admitted.Load(), l.otherErr.Load())
	if l.signedOut.Load() != 0 || l.admitted.Load() != 0 || l.otherErr.Load() != 0 {
		t.Error("during the fault a session was lost, a revoked one found, or an error was not 503")
	}
}

// serviceBack waits until b takes a write that must survive a failover
// again (in a cluster, in the slots of the node that failed: a token
// for which in is true), and returns how long after the fault that was.
func (d *drill) serviceBack(t *testing.T, since time.Time, within time.Duration, in func(key string) bool) time.Duration {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(within)
	for i := 0; ; i++ {
		token := fmt.Sprint(since.UnixNano(), "-", i)
		if in != nil && !in(d.b.onceKey("probe", token)) {
			continue
		}
		ok, err := d.b.SpendOnce(ctx, "probe", token, time.Minute)
		if err == nil && ok {
			return time.Since(since)
		}
		if err != nil && !refusal.IsUnavailable(err) {
			t.Fatalf("during the failover a write failed otherwise than unavailable: %v", err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("no service %s after the fault: %v", within, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// check verifies, through b, that everything acknowledged before the
// fault holds: the TOTP step replayed is refused, the live session is
// found, the revoked ones are not.
func (d *drill) check(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	retry := func(what string, f func() error) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			err := f()
			if err == nil {
				return
			}
			var e *Error
			if !errors.As(err, &e) || time.Now().After(deadline) {
				t.Fatalf("%s after the failover: %v", what, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	retry("replaying the TOTP step on b", func() error {
		ok, err := d.b.SpendOnce(ctx, "totp-step", d.code, 2*time.Minute)
		if err == nil && ok {
			t.Fatal("the TOTP step spent on a before the fault was accepted again on b after it")
		}
		return err
	})
	sb := d.b.SessionStore().(*Store)
	retry("the live session", func() error {
		_, ok, err := sb.Find(ctx, d.live)
		if err == nil && !ok {
			t.Fatal("a session acknowledged before the fault is gone after it")
		}
		return err
	})
	for _, k := range []string{d.ended, d.gone} {
		retry("a revoked session", func() error {
			_, ok, err := sb.Find(ctx, k)
			if err == nil && ok {
				t.Fatalf("session %s, revoked before the fault, is found after it", k)
			}
			return err
		})
	}
	retry("carol's generation", func() error {
		g, err := sb.UserGeneration(ctx, "carol")
		if err == nil && g < 1 {
			t.Fatal("carol's generation, moved forward before the fault, went back")
		}
		return err
	})
}

func quietClients(t *testing.T, cfg redistest.Config) (a, b *Client) {
	log := slog.New(slog.DiscardHandler)
	return open(t, cfg, log), open(t, cfg, log)
}

// TestSentinelFailoverKill: a TOTP step spent on instance A, the master
// killed at once (SIGKILL), the Sentinels fail over to a replica: the
// step replayed on instance B is refused, and the sessions and
// revocations acknowledged before the kill hold.
func TestSentinelFailoverKill(t *testing.T) {
	h := redistest.StartSentinel(t, redistest.Options{}, 2, 3)
	a, b := quietClients(t, h.Config())
	old := h.Master()
	d := prepare(t, a, b, "live", "ended", "gone")
	old.Kill()
	killed := time.Now()
	l := d.startLoad(32)
	t.Logf("master killed %v after the last acknowledged write", killed.Sub(d.acknowledged).Round(time.Microsecond))
	h.WaitFailover(old, 30*time.Second)
	back := d.serviceBack(t, killed, 30*time.Second, nil)
	t.Logf("service again %v after the kill (down-after-milliseconds %v)", back.Round(time.Millisecond), redistest.DownAfter)
	l.finish(t)
	d.check(t)
}

// TestSentinelFailoverPause: the master stopped (SIGSTOP) for 10 s, then
// let run again (SIGCONT): meanwhile the Sentinels fail over, and after
// it the old master is a replica. No token is accepted twice, no
// revoked session found, before or after it comes back.
func TestSentinelFailoverPause(t *testing.T) {
	h := redistest.StartSentinel(t, redistest.Options{}, 2, 3)
	a, b := quietClients(t, h.Config())
	old := h.Master()
	d := prepare(t, a, b, "live", "ended", "gone")
	old.Pause()
	paused := time.Now()
	l := d.startLoad(32)
	resumed := false
	defer func() {
		if !resumed {
			old.Resume()
		}
	}()
	h.WaitFailover(old, 30*time.Second)
	back := d.serviceBack(t, paused, 30*time.Second, nil)
	t.Logf("service again %v after the master stopped", back.Round(time.Millisecond))
	d.check(t)
	time.Sleep(time.Until(paused.Add(10 * time.Second)))
	old.Resume()
	resumed = true
	// The old master comes back as it was at the stop, until the
	// Sentinels make it a replica: nothing it holds is read meanwhile.
	time.Sleep(3 * time.Second)
	l.finish(t)
	d.check(t)
}

// TestClusterFailoverKill: the master of the slots of a TOTP step and of
// sessions killed (SIGKILL); its replica takes over; the same checks.
// With one replica per master, the promoted one has none left, so writes
// in its slots are refused (503) until the old node is back as its
// replica.
func TestClusterFailoverKill(t *testing.T) {
	cl := redistest.StartCluster(t, redistest.Options{}, 3, 1)
	cfg := cl.Config()
	a, b := quietClients(t, cfg)
	probe, d, victim := prepareInOneMaster(t, cl, a, b)
	slots := cl.Slots()
	victim.Kill()
	killed := time.Now()
	l := d.startLoad(32)
	cl.WaitFailover(victim, a.onceKey("totp-step", d.code), 30*time.Second)
	t.Logf("replica promoted %v after the kill (cluster-node-timeout %v)", time.Since(killed).Round(time.Millisecond), redistest.DownAfter)
	// The promoted master has no replica left to confirm a write in its
	// slots: they get 503 until one is back, here the old node
	// restarted, which rejoins as the new master's replica.
	victim.Start()
	back := d.serviceBack(t, killed, 30*time.Second, func(key string) bool { return slots[redistest.Slot(key)] == victim })
	t.Logf("writes in its slots confirmed again %v after the kill, the old node restarted as a replica", back.Round(time.Millisecond))
	l.finish(t)
	d.check(t)
	probe.check(t)
}

// prepareInOneMaster prepares two drills (see prepare): probe, whose TOTP
// step's slot picks the victim master, and d, whose sessions and spent
// TOTP step are all in the victim's slots.
func prepareInOneMaster(t *testing.T, cl *redistest.Cluster, a, b *Client) (probe, d *drill, victim *redistest.Server) {
	t.Helper()
	probe = prepare(t, a, b, "p-live", "p-ended", "p-gone")
	victim = cl.MasterOf(a.onceKey("totp-step", probe.code))
	var names []string
	for i := 0; len(names) < 3; i++ {
		k := fmt.Sprint("k", i)
		if cl.MasterOf(a.key("s", k)) == victim {
			names = append(names, k)
		}
		if i > 1000 {
			t.Fatal("no session key in the victim's slots")
		}
	}
	d = prepare(t, a, b, names[0], names[1], names[2])
	if cl.MasterOf(a.onceKey("totp-step", d.code)) != victim {
		// Another step, in the victim's slots.
		for i := 0; ; i++ {
			d.code = fmt.Sprint("alice:", i)
			if cl.MasterOf(a.onceKey("totp-step", d.code)) == victim {
				break
			}
		}
		if ok, err := a.SpendOnce(context.Background(), "totp-step", d.code, 2*time.Minute); !ok || err != nil {
			t.Fatalf("spending a TOTP step on a = %v, %v", ok, err)
		}
	}
	return probe, d, victim
}

// TestClusterFailoverPause: the master of the slots of a TOTP step and
// of sessions stopped (SIGSTOP) for 10 s, then let run again (SIGCONT):
// its replica is promoted meanwhile, and the old master rejoins as its
// replica. No token is accepted twice, no revoked session found, before
// or after it comes back; a token spent over and over through both
// instances during the fault is accepted once at most.
func TestClusterFailoverPause(t *testing.T) {
	cl := redistest.StartCluster(t, redistest.Options{}, 3, 1)
	a, b := quietClients(t, cl.Config())
	probe, d, victim := prepareInOneMaster(t, cl, a, b)
	inVictim := func(kind, token string) bool { return cl.MasterOf(a.onceKey(kind, token)) == victim }
	// A token nobody has spent yet, in the victim's slots, spent again
	// and again through both instances while the fault lasts.
	fresh := "during"
	for i := 0; !inVictim("totp-step", fresh); i++ {
		fresh = fmt.Sprint("during-", i)
	}
	slots := cl.Slots()
	victim.Pause()
	paused := time.Now()
	resumed := false
	defer func() {
		if !resumed {
			victim.Resume()
		}
	}()
	l := d.startLoad(32)
	var accepted, tries atomic.Int64
	stopSpends := make(chan struct{})
	var spends sync.WaitGroup
	for _, c := range []*Client{a, b} {
		spends.Go(func() {
			for {
				select {
				case <-stopSpends:
					return
				default:
				}
				tries.Add(1)
				if ok, err := c.SpendOnce(context.Background(), "totp-step", fresh, 2*time.Minute); ok && err == nil {
					accepted.Add(1)
				}
				time.Sleep(5 * time.Millisecond)
			}
		})
	}
	cl.WaitFailover(victim, a.onceKey("totp-step", d.code), 60*time.Second)
	t.Logf("replica promoted %v after the stop (cluster-node-timeout %v)", time.Since(paused).Round(time.Millisecond), redistest.DownAfter)
	d.check(t)
	time.Sleep(time.Until(paused.Add(10 * time.Second)))
	victim.Resume()
	resumed = true
	// The old master comes back as it was at the stop until the cluster
	// makes it the new master's replica; writes in its slots are
	// confirmed again once it is.
	back := d.serviceBack(t, paused, 60*time.Second, func(key string) bool { return slots[redistest.Slot(key)] == victim })
	t.Logf("writes in its slots confirmed again %v after the stop, the old master a replica", back.Round(time.Millisecond))
	time.Sleep(time.Second)
	close(stopSpends)
	spends.Wait()
	l.finish(t)
	// A spend answered 503 may still have been recorded: it is then
	// refused from there on, never accepted later.
	t.Logf("a fresh token spent %d times through both instances during the fault: accepted %d times", tries.Load(), accepted.Load())
	if accepted.Load() > 1 {
		t.Errorf("a token was accepted %d times during the fault", accepted.Load())
	}
	if ok, err := b.SpendOnce(context.Background(), "totp-step", fresh, 2*time.Minute); ok || err != nil {
		t.Errorf("the token spent during the fault, spent again after it: %v, %v; want refused", ok, err)
	}
	d.check(t)
	probe.check(t)
}
