package login

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/backupweb/backupweb/internal/auth/secondfactor"
	"github.com/backupweb/backupweb/internal/redisstore"
	"github.com/backupweb/backupweb/internal/testkit/clocktest"
	"github.com/backupweb/backupweb/internal/testkit/redistest"
)

// TestFactorsInRedisFailClosed: with the factors in Redis, a right
// password never signs in alone when the user's factors cannot be read:
// a record whose MAC fails is refused (403, logged with the word auth),
// and with Redis down the answer is 503 with Retry-After.
func TestFactorsInRedisFailClosed(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	h := newFactorHarness(t, SecondFactorOptional, nil)
	c, err := redisstore.Open(redisstore.Options(srv.Config()), h.env.Logger)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	h.stop()
	h.env.Shared = c
	h.clock = clocktest.New(time.Now())
	h.env.Now = h.clock.Now
	h.start()
	if h.p.Factors() != nil {
		t.Fatal("with a shared store the factors file is still used")
	}
	h.enrol("alice")
	if r := h.browser().login("alice", testPasswords["alice"], "/"); r.status != http.StatusSeeOther || !strings.HasPrefix(r.header.Get("Location"), secondfactor.SecondFactorPath) {
		t.Fatalf("enrolled in Redis: %d %s, want the second-factor step", r.status, r.header.Get("Location"))
	}

	// The record altered in Redis: its MAC no longer checks.
	opt, err := rueidis.ParseURL(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	opt.DisableCache = true
	rd, err := rueidis.NewClient(opt)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	key := srv.Config().Prefix + "us:{alice}:f"
	if err := rd.Do(context.Background(), rd.B().Hset().Key(key).FieldValue().FieldValue("r", `{"recovery":[]}`).Build()).Error(); err != nil {
		t.Fatal(err)
	}
	r := h.browser().login("alice", testPasswords["alice"], "/")
	if r.status != http.StatusForbidden {
		t.Fatalf("a record whose MAC fails: %d, want 403", r.status)
	}
	if logs := h.logs.String(); !strings.Contains(logs, "auth refused") || !strings.Contains(logs, "MAC does not check") {
		t.Fatalf("the refusal is not logged with auth and the cause:\n%s", logs)
	}

	srv.Stop()
	r = h.browser().login("alice", testPasswords["alice"], "/")
	if r.status != http.StatusServiceUnavailable || r.header.Get("Retry-After") == "" {
		t.Fatalf("Redis down: %d, Retry-After %q; want 503 with Retry-After", r.status, r.header.Get("Retry-After"))
	}
}
