package redisstore

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/refusal"
	"github.com/backupweb/backupweb/internal/testkit/logtest"
	"github.com/backupweb/backupweb/internal/testkit/redistest"
)

// TestEvictionPolicy: a Redis that may evict keys before they expire is
// named in one warning at start; with noeviction (Redis's default) and
// Redis full, a spend is refused as unavailable (503), the spent token
// included, and nothing spent is forgotten.
//
// The question about the policy is asked in the background of Open: the
// test waits until each client has asked it (evictionChecked), so that
// the first client's question, however late a loaded machine lets it
// run, is answered before the policy is changed.
func TestEvictionPolicy(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	ctx := context.Background()
	var quiet logtest.Buffer
	a := open(t, srv.Config(), slog.New(slog.NewTextHandler(&quiet, nil)))
	<-a.evictionChecked
	if ok, err := a.SpendOnce(ctx, "totp-step", "alice\x0042", time.Minute); !ok || err != nil {
		t.Fatalf("first spend = %v, %v", ok, err)
	}
	config := func(key, value string) {
		t.Helper()
		if err := a.rd().Do(ctx, a.rd().B().ConfigSet().ParameterValue().ParameterValue(key, value).Build()).Error(); err != nil {
			t.Fatal(err)
		}
	}

	config("maxmemory", "1")
	t.Cleanup(func() { config("maxmemory", "0") })
	_, err := a.SpendOnce(ctx, "totp-step", "alice\x0043", time.Minute)
	if !refusal.IsUnavailable(err) || !strings.Contains(err.Error(), "OOM") {
		t.Fatalf("a new token in a full Redis: %v, want an unavailable error", err)
	}
	if ok, err := a.SpendOnce(ctx, "totp-step", "alice\x0042", time.Minute); ok || !refusal.IsUnavailable(err) {
		t.Fatalf("the spent token in a full Redis: %v, %v; want refused", ok, err)
	}
	config("maxmemory", "0")
	if ok, err := a.SpendOnce(ctx, "totp-step", "alice\x0042", time.Minute); ok || err != nil {
		t.Fatalf("the spent token once Redis has room: %v, %v; want false", ok, err)
	}

	config("maxmemory-policy", "allkeys-lru")
	var logs logtest.Buffer
	b := open(t, srv.Config(), slog.New(slog.NewTextHandler(&logs, nil)))
	<-b.evictionChecked
	if !strings.Contains(logs.String(), "maxmemory_policy=allkeys-lru") {
		t.Errorf("no warning about the eviction policy: %s", logs.String())
	}
	if strings.Contains(quiet.String(), "maxmemory-policy") {
		t.Errorf("a warning with noeviction: %s", quiet.String())
	}
}
