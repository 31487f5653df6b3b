package login_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/redisstore"
	"github.com/backupweb/backupweb/internal/testkit/clocktest"
	"github.com/backupweb/backupweb/internal/testkit/logintest"
	"github.com/backupweb/backupweb/internal/testkit/redistest"
)

// redisHarness is a harness whose sessions, counters and user state are
// in a real redis-server.
func redisHarness(b *testing.B) *logintest.Harness {
	srv := redistest.Start(b, redistest.Options{})
	h := logintest.New(b, nil)
	c, err := redisstore.Open(redisstore.Options(srv.Config()), h.Env.Logger)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	h.Stop()
	h.Env.Shared = c
	h.Clock = clocktest.New(time.Now())
	h.Env.Now = h.Clock.Now
	h.Start()
	return h
}

// BenchmarkRedisMeWithSession and BenchmarkRedisMeWithToken compare a
// session request and a token request with store = redis: both are one
// read answered from Redis's client-side cache, so their times should
// be within 10% of each other.
func BenchmarkRedisMeWithSession(b *testing.B) {
	h := redisHarness(b)
	br := h.Browser()
	br.MustLogin("alice")
	req := httptest.NewRequest(http.MethodGet, "/api/me", nil)
	req.AddCookie(&http.Cookie{Name: h.P.Manager().CookieName(), Value: br.SessionCookie()})
	serveBench(b, h.Handler, req, http.StatusOK)
}

func BenchmarkRedisMeWithToken(b *testing.B) {
	h := redisHarness(b)
	req := httptest.NewRequest(http.MethodGet, "/api/me", nil)
	req.Header.Set("Authorization", "Bearer "+benchToken(b, h))
	serveBench(b, h.Handler, req, http.StatusOK)
}
