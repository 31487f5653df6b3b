package secondfactor_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/backupweb/backupweb/internal/auth/login"
	"github.com/backupweb/backupweb/internal/auth/secondfactor"
	"github.com/backupweb/backupweb/internal/redisstore"
	"github.com/backupweb/backupweb/internal/testkit/clocktest"
	"github.com/backupweb/backupweb/internal/testkit/logintest"
	"github.com/backupweb/backupweb/internal/testkit/redistest"
)

// TestFactorsInRedisFailClosed: with the factors in Redis, a right
// password never signs in alone when the user's factors cannot be read:
// a record whose MAC fails is refused (403, logged with the word auth),
// and with Redis down the answer is 503 with Retry-After.
func TestFactorsInRedisFailClosed(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	h := newFactorHarness(t, login.SecondFactorOptional, nil)
	c, err := redisstore.Open(redisstore.Options(srv.Config()), h.Env.Logger)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	h.Stop()
	h.Env.Shared = c
	h.Clock = clocktest.New(time.Now())
	h.Env.Now = h.Clock.Now
	h.Start()
	if h.P.Factors() != nil {
		t.Fatal("with a shared store the factors file is still used")
	}
	h.Enrol("alice")
	if r := h.browser().Login("alice", logintest.Passwords["alice"], "/"); r.Status != http.StatusSeeOther || !strings.HasPrefix(r.Header.Get("Location"), secondfactor.SecondFactorPath) {
		t.Fatalf("enrolled in Redis: %d %s, want the second-factor step", r.Status, r.Header.Get("Location"))
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
	r := h.browser().Login("alice", logintest.Passwords["alice"], "/")
	if r.Status != http.StatusForbidden {
		t.Fatalf("a record whose MAC fails: %d, want 403", r.Status)
	}
	if logs := h.Logs.String(); !strings.Contains(logs, "auth refused") || !strings.Contains(logs, "MAC does not check") {
		t.Fatalf("the refusal is not logged with auth and the cause:\n%s", logs)
	}

	srv.Stop()
	r = h.browser().Login("alice", logintest.Passwords["alice"], "/")
	if r.Status != http.StatusServiceUnavailable || r.Header.Get("Retry-After") == "" {
		t.Fatalf("Redis down: %d, Retry-After %q; want 503 with Retry-After", r.Status, r.Header.Get("Retry-After"))
	}
}
