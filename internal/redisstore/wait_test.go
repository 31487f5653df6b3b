package redisstore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/factors"
	"github.com/backupweb/backupweb/internal/testkit/redistest"
	"github.com/backupweb/backupweb/internal/tokens"
	"github.com/backupweb/backupweb/internal/userstate"
	"github.com/backupweb/backupweb/internal/userstate/storetest"
)

// TestWaitOnlyOnListedWrites: through Sentinel, with a replica to
// confirm, the master runs a WAIT for each write that must survive a
// failover (sign-in, spend, sign-out, a user's sessions ended, factor and
// token changes, a passkey's count), and none for the reads a signed-in
// request makes, nor for a session's activity being brought forward.
// The WAITs are counted by the master itself (INFO commandstats).
func TestWaitOnlyOnListedWrites(t *testing.T) {
	h := redistest.StartSentinel(t, redistest.Options{}, 1, 1)
	cfg := h.Config()
	// Every listed write must be confirmed here: room for a busy machine,
	// where the kit's half second is meant for failovers.
	cfg.ReplicaTimeout, cfg.CommandTimeout = 10*time.Second, 15*time.Second
	c := open(t, cfg, slog.New(slog.DiscardHandler))
	ctx := context.Background()
	master := h.Master()
	st := c.SessionStore().(*Store)
	rk, err := userstate.NewRecordKeys(storetest.Secret)
	if err != nil {
		t.Fatal(err)
	}
	us := c.UserState(rk, storetest.NewKeys(t), nil)
	waits := func(what string, f func() error) int {
		t.Helper()
		before := master.Calls("wait")
		if err := f(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		n := master.Calls("wait") - before
		t.Logf("%s: %d WAITs", what, n)
		return n
	}
	now := time.Now()
	passkey := []byte("passkey-one")
	cred := func(count uint32) json.RawMessage {
		b, _ := json.Marshal(map[string]any{"id": passkey, "publicKey": []byte("pk"), "authenticator": map[string]any{"signCount": count}})
		return b
	}
	secretHash := sha256.Sum256([]byte("a machine token"))
	writes := []struct {
		what string
		f    func() error
	}{
		{"sign-in", func() error { return st.Commit(ctx, "s1", record("alice", now, time.Hour)) }},
		{"another sign-in", func() error { return st.Commit(ctx, "s2", record("alice", now, time.Hour)) }},
		{"spend a TOTP step", func() error {
			if ok, err := c.SpendOnce(ctx, "totp-step", "alice:1", time.Minute); !ok {
				return err
			}
			return nil
		}},
		{"sign-out", func() error { return st.Delete(ctx, "s2") }},
		{"factor change", func() error {
			return us.EditFactors(ctx, "alice", func(r *factors.Record) error {
				r.Handle = factors.NewHandle()
				r.Passkeys = append(r.Passkeys, factors.Passkey{Name: "key", Created: now.UTC(), ID: passkey, Credential: cred(1)})
				return nil
			})
		}},
		{"passkey count", func() error { return us.UsePasskey(ctx, "alice", passkey, 2, cred(2), now) }},
		{"token added", func() error {
			return us.AddToken(ctx, tokens.Token{ID: "t1", User: "alice", Created: now.UTC(), Hash: hex.EncodeToString(secretHash[:])})
		}},
		{"token revoked", func() error { _, err := us.RevokeToken(ctx, "alice", "t1"); return err }},
		{"factors reset", func() error { _, err := us.ResetFactors(ctx, "alice"); return err }},
		{"a user's sessions ended", func() error { _, err := st.DeleteUser(ctx, "alice"); return err }},
	}
	// The reads a signed-in request makes go to a session that exists.
	if err := st.Commit(ctx, "s3", record("bob", now, time.Hour)); err != nil {
		t.Fatal(err)
	}
	for _, w := range writes {
		if n := waits(w.what, w.f); n < 1 {
			t.Errorf("%s: no WAIT, want one at least", w.what)
		}
	}
	const reads = 200
	n := waits("200 signed-in requests' reads and activity", func() error {
		for i := range reads {
			if _, ok, err := st.Find(ctx, "s3"); !ok || err != nil {
				t.Fatalf("find: %v, %v", ok, err)
			}
			if _, err := st.UserGeneration(ctx, "bob"); err != nil {
				return err
			}
			if _, err := st.Indexed(ctx, "s3", "bob"); err != nil {
				return err
			}
			if _, err := us.Status(ctx, "bob"); err != nil {
				return err
			}
			if _, err := c.Spent(ctx, "totp-step", "alice:1"); err != nil {
				return err
			}
			if i%20 == 0 {
				if err := st.Touch(ctx, "s3", time.Now(), now.Add(time.Hour), nil); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if n != 0 {
		t.Errorf("%d WAITs for reads, want none", n)
	}
}
