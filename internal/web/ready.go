package web

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"

	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/refusal"
)

// readiness is one check of /readyz: a Checker and the words shown when it
// fails without saying (with an *auth.NotReady) what kind of part is down.
type readiness struct {
	check auth.Checker
	part  string
}

// ready answers /readyz: 200 "ready" when the provider can answer
// authenticated requests (see auth.Checker), else 503 with one line saying
// what kind of part is not ready ("the session store does not answer").
// Addresses and error texts never reach the answer, which anyone can read:
// they go to the log, once when a failure starts or changes and once when
// the service is ready again, however often /readyz is asked. Like
// /healthz it is plain text for machines and not protected.
func ready(p auth.Provider, shared auth.Checker, log *slog.Logger) http.HandlerFunc {
	var checks []readiness
	if shared != nil {
		checks = append(checks, readiness{shared, "the shared store does not answer"})
	}
	if c, ok := p.(auth.Checker); ok {
		checks = append(checks, readiness{c, "the authentication provider is not ready"})
	}
	var mu sync.Mutex
	logged := "" // the failure last logged; "" when ready
	note := func(ctx context.Context, failure string) {
		mu.Lock()
		defer mu.Unlock()
		if failure == logged {
			return
		}
		if failure == "" {
			log.InfoContext(ctx, "readyz: ready again")
		} else {
			log.ErrorContext(ctx, "readyz: not ready", "err", failure)
		}
		logged = failure
	}
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		for _, c := range checks {
			err := c.check.Ready(r.Context())
			if err == nil {
				continue
			}
			part := c.part
			if nr := (*auth.NotReady)(nil); errors.As(err, &nr) && nr.Part != "" {
				part = nr.Part
			}
			note(r.Context(), err.Error())
			// Plain text for machines, but Retry-After as everywhere.
			refusal.Reply{RetryAfter: 5}.SetRetryAfter(w.Header())
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintf(w, "not ready: %s\n", strings.ReplaceAll(part, "\n", " "))
			return
		}
		if _, missing := p.(missingProvider); missing {
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintln(w, "not ready: no authentication provider configured")
			return
		}
		note(r.Context(), "")
		w.Write([]byte("ready"))
	}
}
