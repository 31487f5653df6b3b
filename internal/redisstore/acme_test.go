package redisstore

import (
	"context"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/testkit/redistest"
)

// TestACMERecordsAndLock: records round-trip byte for byte (binary
// included), expire when given a time to live, and are gone after
// ACMEDelete; the lock is taken by one token at a time, released only by
// its holder, and free again once its time runs out.
func TestACMERecordsAndLock(t *testing.T) {
	c := open(t, redistest.Start(t, redistest.Options{}).Config(), nil)
	ctx := context.Background()
	if v, err := c.ACMEGet(ctx, "backups.example.com"); err != nil || v != nil {
		t.Fatalf("missing record: %q %v", v, err)
	}
	val := []byte{0, 1, 2, 0xff, '\n', 'x'}
	if err := c.ACMEPut(ctx, "backups.example.com", val, 0); err != nil {
		t.Fatal(err)
	}
	if err := c.ACMEPut(ctx, "tok+http-01", []byte("k"), time.Hour); err != nil {
		t.Fatal(err)
	}
	if v, err := c.ACMEGet(ctx, "backups.example.com"); err != nil || string(v) != string(val) {
		t.Fatalf("record: %q %v", v, err)
	}
	ks := keys(t, c)
	if ttl := ks["acme:backups.example.com"]; ttl != -time.Millisecond {
		t.Errorf("certificate record ttl %s, want none", ttl)
	}
	if ttl := ks["acme:tok+http-01"]; ttl <= 0 || ttl > time.Hour {
		t.Errorf("challenge record ttl %s", ttl)
	}
	if names, err := c.ACMENames(ctx); err != nil || len(names) != 2 || names[0] != "backups.example.com" || names[1] != "tok+http-01" {
		t.Errorf("names %q %v", names, err)
	}
	if err := c.ACMEDelete(ctx, "tok+http-01"); err != nil {
		t.Fatal(err)
	}
	if v, _ := c.ACMEGet(ctx, "tok+http-01"); v != nil {
		t.Error("deleted record still read")
	}

	if ok, err := c.ACMELock(ctx, "backups.example.com", "one", time.Minute); !ok || err != nil {
		t.Fatalf("first lock: %v %v", ok, err)
	}
	if ok, err := c.ACMELock(ctx, "backups.example.com", "two", time.Minute); ok || err != nil {
		t.Fatalf("second lock while held: %v %v", ok, err)
	}
	if ok, err := c.ACMELock(ctx, "backups.example.com", "one", time.Minute); !ok || err != nil {
		t.Fatalf("the holder taking it again: %v %v", ok, err)
	}
	if err := c.ACMEUnlock(ctx, "backups.example.com", "two"); err != nil {
		t.Fatal(err)
	}
	if ok, _ := c.ACMELock(ctx, "backups.example.com", "two", time.Minute); ok {
		t.Fatal("another token released the lock")
	}
	if err := c.ACMEUnlock(ctx, "backups.example.com", "one"); err != nil {
		t.Fatal(err)
	}
	if ok, err := c.ACMELock(ctx, "backups.example.com", "two", 50*time.Millisecond); !ok || err != nil {
		t.Fatalf("lock after release: %v %v", ok, err)
	}
	waitUntil(t, func() bool {
		ok, err := c.ACMELock(ctx, "backups.example.com", "three", time.Minute)
		return ok && err == nil
	})
}
