package app

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/backupweb/backupweb/internal/catalog"
)

// verifier is the service's own verification pass ([backups]
// verify_every): one pass over every backup with a recorded SHA-256 at
// verify_rate, the next verify_every after the end of the last, until
// stopped. The first starts at once, so results are there after the first
// pass rather than a whole period later.
type verifier struct {
	cat   *catalog.Catalog
	every time.Duration
	rate  int64
	log   *slog.Logger

	cancel context.CancelFunc
	done   sync.WaitGroup
}

// startVerifier starts the passes over cat, or returns nil when every is
// zero (off).
func startVerifier(cat *catalog.Catalog, every time.Duration, rate int64, log *slog.Logger) *verifier {
	if cat == nil || every <= 0 {
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	v := &verifier{cat: cat, every: every, rate: rate, log: log, cancel: cancel}
	v.done.Add(1)
	go v.run(ctx)
	return v
}

// run makes passes until ctx ends.
func (v *verifier) run(ctx context.Context) {
	defer v.done.Done()
	for {
		v.pass(ctx)
		t := time.NewTimer(v.every)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// pass checks every backup once and logs what it found: each mismatch
// and unreadable file as a warning, and a summary.
func (v *verifier) pass(ctx context.Context) {
	start := time.Now()
	sum, err := v.cat.Verify(ctx, "", catalog.VerifyOptions{Rate: v.rate, Done: func(ch catalog.Check) {
		switch ch.Result {
		case catalog.VerifyMismatch:
			v.log.Warn("verify: checksum mismatch", "path", ch.Path, "recorded", ch.Want, "read", ch.Got)
		case catalog.VerifyUnreadable:
			v.log.Warn("verify: backup unreadable", "path", ch.Path, "err", ch.Err)
		}
	}})
	if ctx.Err() != nil {
		return // stopping: not a failure
	}
	if err != nil {
		v.log.Error("verify: pass failed", "dir", v.cat.Dir(), "err", err)
		return
	}
	v.log.Info("verify: pass done", "files", sum.Files, "ok", sum.OK, "mismatch", sum.Mismatch,
		"unreadable", sum.Unreadable, "changed_while_read", sum.Changed, "without_checksum", sum.NoSum,
		"bytes", sum.Bytes, "duration", time.Since(start).Round(time.Millisecond))
}

// stop ends the pass under way and waits for it. A nil *verifier does
// nothing.
func (v *verifier) stop() {
	if v == nil {
		return
	}
	v.cancel()
	v.done.Wait()
}
