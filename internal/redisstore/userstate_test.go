package redisstore

import (
	"context"
	"fmt"
	"log/slog"
	"testing"

	"github.com/backupweb/backupweb/internal/testkit/redistest"
	"github.com/backupweb/backupweb/internal/userstate"
	"github.com/backupweb/backupweb/internal/userstate/storetest"
)

// TestUserStateConformance runs the conformance test over one real
// redis-server seen through two clients (two instances), each test on a
// prefix of its own.
func TestUserStateConformance(t *testing.T) {
	testUserStateConformance(t, redistest.Start(t, redistest.Options{}).Config())
}

func testUserStateConformance(t *testing.T, cfg redistest.Config) {
	quiet := slog.New(slog.DiscardHandler)
	n := 0
	storetest.Run(t, func(t *testing.T) storetest.Harness {
		n++
		cfg := cfg
		cfg.Prefix = fmt.Sprintf("conformance%d:", n)
		rk, err := userstate.NewRecordKeys(storetest.Secret)
		if err != nil {
			t.Fatal(err)
		}
		keys := storetest.NewKeys(t)
		a, b := open(t, cfg, quiet), open(t, cfg, quiet)
		sa := a.UserState(rk, keys, nil)
		return storetest.Harness{
			A: sa, B: b.UserState(rk, keys, nil), Keys: keys,
			Corrupt: func(t *testing.T, user string) {
				k := sa.factorsKey(user)
				if err := a.rd().Do(context.Background(), a.rd().B().Hset().Key(k).FieldValue().FieldValue("r", `{"recovery":[]}`).Build()).Error(); err != nil {
					t.Fatal(err)
				}
			},
		}
	})
}
