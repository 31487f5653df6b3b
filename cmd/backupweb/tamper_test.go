package main

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/backupweb/backupweb/internal/testkit/redistest"
)

// TestRedisWriterCannotForgeSessions plays an administrator of the Redis
// server who also holds an account (bob): copying admin's session record
// onto bob's key, editing bob's record to name admin, or moving its
// deadline (with PERSIST, so that Redis keeps it) makes bob nobody, never
// admin, and never keeps a session past its own deadlines.
func TestRedisWriterCannotForgeSessions(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{Password: redisPassword})
	dir := t.TempDir()
	users := addUsers(t, dir, "admin", "bob")
	in := startInstance(t, redisConfig(srv, dir, users, "prefix = tamper:", ""))
	rd := redisClient(t, srv)
	ctx := context.Background()

	// keyOf returns the Redis key of user's only session.
	keyOf := func(user string) string {
		t.Helper()
		ids, err := rd.Do(ctx, rd.B().Zrange().Key("tamper:u:"+user).Min("0").Max("-1").Build()).AsStrSlice()
		if err != nil || len(ids) != 1 {
			t.Fatalf("sessions of %s: %q %v", user, ids, err)
		}
		return "tamper:s:" + ids[0]
	}
	hset := func(key string, fields map[string]string) {
		t.Helper()
		cmd := rd.B().Hset().Key(key).FieldValue()
		for f, v := range fields {
			cmd = cmd.FieldValue(f, v)
		}
		if err := rd.Do(ctx, cmd.Build()).Error(); err != nil {
			t.Fatal(err)
		}
	}
	far := strconv.FormatInt(time.Now().Add(365*24*time.Hour).UnixMilli(), 10)

	cases := []struct {
		name   string
		tamper func(t *testing.T, admin, bob string)
	}{
		{"admin's record copied onto bob's key", func(t *testing.T, admin, bob string) {
			rec, err := rd.Do(ctx, rd.B().Hgetall().Key(admin).Build()).AsStrMap()
			if err != nil {
				t.Fatal(err)
			}
			hset(bob, rec)
		}},
		{"bob's record edited to name admin", func(t *testing.T, _, bob string) {
			r, err := rd.Do(ctx, rd.B().Hget().Key(bob).Field("r").Build()).ToString()
			if err != nil || !strings.Contains(r, `"username":"bob"`) {
				t.Fatalf("bob's record: %q %v", r, err)
			}
			hset(bob, map[string]string{"r": strings.Replace(r, `"username":"bob"`, `"username":"admin"`, 1), "u": "admin"})
		}},
		{"deadline moved and PERSIST", func(t *testing.T, _, bob string) {
			hset(bob, map[string]string{"e": far, "l": strconv.FormatInt(time.Now().UnixMilli(), 10)})
			if err := rd.Do(ctx, rd.B().Persist().Key(bob).Build()).Error(); err != nil {
				t.Fatal(err)
			}
		}},
		{"MAC removed", func(t *testing.T, _, bob string) {
			if err := rd.Do(ctx, rd.B().Hdel().Key(bob).Field("m").Build()).Error(); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			adminSID, _ := signIn(t, in.url, "admin", "pw-admin")
			bobSID, _ := signIn(t, in.url, "bob", "pw-bob")
			if code, body, _ := send(t, "GET", in.url+"/api/me", bobSID, nil, ""); code != http.StatusOK || !strings.Contains(body, `"bob"`) {
				t.Fatalf("bob before: %d %s", code, body)
			}
			before := strings.Count(in.stderr.String(), "fails its check")
			tc.tamper(t, keyOf("admin"), keyOf("bob"))
			// The instance reads records through Redis's client-side
			// cache: an outside write reaches it with the invalidation
			// message, a few milliseconds later. Until then it may still
			// serve bob's own, intact record, never anything forged.
			deadline := time.Now().Add(5 * time.Second)
			for {
				code, body, _ := send(t, "GET", in.url+"/api/me", bobSID, nil, "")
				if strings.Contains(body, "admin") {
					t.Fatalf("bob's cookie after the change: %d %s", code, body)
				}
				if code == http.StatusUnauthorized {
					break
				}
				if code != http.StatusOK || time.Now().After(deadline) {
					t.Fatalf("bob's cookie after the change: %d %s, want 401", code, body)
				}
				time.Sleep(time.Millisecond)
			}
			for range 3 {
				code, body, _ := send(t, "GET", in.url+"/api/me", bobSID, nil, "")
				if code != http.StatusUnauthorized || strings.Contains(body, "admin") {
					t.Fatalf("bob's cookie after the change: %d %s, want 401", code, body)
				}
			}
			if n := strings.Count(in.stderr.String(), "fails its check") - before; n != 1 {
				t.Errorf("%d log lines about the refused record, want 1", n)
			}
			if code, body, _ := send(t, "GET", in.url+"/api/me", adminSID, nil, ""); code != http.StatusOK || !strings.Contains(body, `"admin"`) {
				t.Errorf("admin's own session: %d %s", code, body)
			}
			signOut(t, in.url, adminSID)
		})
	}
}

// redisClient connects to srv as the tests' administrator.
func redisClient(t *testing.T, srv *redistest.Server) rueidis.Client {
	t.Helper()
	opt, err := rueidis.ParseURL(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	opt.Password = redisPassword
	opt.DisableCache = true
	rd, err := rueidis.NewClient(opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rd.Close)
	return rd
}
