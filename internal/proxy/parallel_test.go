package proxy_test

import (
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/auth/basic"
	"github.com/backupweb/backupweb/internal/auth/passwordauth"
	"github.com/backupweb/backupweb/internal/testkit"
)

// guardBasic serves a fresh Basic provider (max_failures 2, so that
// counting right requests as failures would show at once) in front of up.
func guardBasic(t *testing.T, up string) guarded {
	hash := testkit.HashCost(t, "pw", 8)
	return guard(t, up, func(_ string, log *slog.Logger) auth.Provider {
		return mustBasic(t, basic.Config{Username: "api", Password: hash, UseBcrypt: true, Throttling: passwordauth.Throttling{MaxFailures: 2}}, auth.Deps{Logger: log})
	})
}

// TestForwardAuthRightCredentialsInParallel: nginx's /auth/request and
// Traefik's /auth/forward asked by 32 parallel clients with the right
// Basic credential, round after round from a fresh start: only 2xx.
func TestForwardAuthRightCredentialsInParallel(t *testing.T) {
	up := startUpstream(t)
	for _, path := range []string{"/auth/request", "/auth/forward"} {
		t.Run(strings.TrimPrefix(path, "/auth/"), func(t *testing.T) {
			g := guardBasic(t, up.URL)
			total := map[int]int{}
			for range 10 {
				for code, n := range testkit.Burst(t, 32, func(int) *http.Request {
					r, _ := http.NewRequest("GET", g.url+path, nil)
					r.SetBasicAuth("api", "pw")
					return r
				}) {
					total[code] += n
				}
			}
			if total[200] != 320 {
				t.Fatalf("%s, 32 parallel clients × 10 rounds with the right credential: %v; want only 200", path, total)
			}
			if strings.Contains(g.logs.String(), "auth refused") {
				t.Errorf("right credentials logged as refused:\n%s", g.logs)
			}
		})
	}
}

// TestPageWithThirtyAssets: in proxy mode, a browser that has the right
// Basic password loads a page and its 30 assets at once on a fresh start:
// every one is 200.
func TestPageWithThirtyAssets(t *testing.T) {
	up := startUpstream(t)
	g := guardBasic(t, up.URL)
	statuses := testkit.Burst(t, 31, func(i int) *http.Request {
		path := "/app/index.html"
		if i > 0 {
			path = fmt.Sprintf("/app/assets/%d.js", i)
		}
		r, _ := http.NewRequest("GET", g.url+path, nil)
		r.SetBasicAuth("api", "pw")
		return r
	})
	if statuses[200] != 31 {
		t.Fatalf("a page and its 30 assets at once: %v; want 31 × 200", statuses)
	}
}
