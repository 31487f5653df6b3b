package catalog

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// The results of verifying one backup against its recorded SHA-256.
const (
	// VerifyOK: the bytes read have the recorded digest.
	VerifyOK = "ok"
	// VerifyMismatch: they do not, whether the file rotted on disk or was
	// changed after its checksum was written.
	VerifyMismatch = "mismatch"
	// VerifyUnreadable: the file could not be opened or read to the end.
	VerifyUnreadable = "unreadable"
)

// Check is the verification of one backup.
type Check struct {
	// Path is the backup's path inside the backups folder.
	Path string
	// Result is VerifyOK, VerifyMismatch or VerifyUnreadable.
	Result string
	// Want is the recorded digest; Got the digest of the bytes read (""
	// when unreadable); Err what failed when unreadable.
	Want, Got string
	Err       error
	// Size is the file's length when opened.
	Size int64
	// At is when the check ended.
	At time.Time
}

// VerifySummary counts what one pass did.
type VerifySummary struct {
	// Files is how many backups with a recorded digest the pass checked;
	// OK, Mismatch and Unreadable split them. Changed counts those
	// changed on disk while they were read (no result is kept for them),
	// NoSum the backups below the path without a recorded digest, which
	// a pass cannot check.
	Files, OK, Mismatch, Unreadable, Changed, NoSum int
	// Bytes is how many bytes were read.
	Bytes int64
}

// VerifyOptions tune a pass.
type VerifyOptions struct {
	// Rate bounds the bytes read per second (0: as fast as the disk
	// goes). The service's own pass reads at [backups] verify_rate, so
	// the pages it serves meanwhile keep their disk.
	Rate int64
	// Started, when set, is told how many backups the pass will check
	// and their total size, before it reads any.
	Started func(files int, bytes int64)
	// Done, when set, is told of each check as it ends.
	Done func(Check)
	// Read, when set, is told of every piece read (progress).
	Read func(n int)
	// clock and sleep replace time.Now and a context-aware sleep in
	// tests of the rate.
	clock func() time.Time
	sleep func(context.Context, time.Duration) error
}

// verified is the last result kept for one backup, for the version of the
// file that was read.
type verified struct {
	result  string
	at      time.Time
	version string
}

// results holds the last result per backup path.
type results struct {
	mu sync.Mutex
	m  map[string]verified
}

// Verify reads every backup at or below path ("" for every backup, "db/"
// or "db" for a folder, "db/x.tar" for one backup) that has a recorded
// SHA-256 (NAME.sha256 or SHA256SUMS) and compares: the result of each is
// kept for its folder's page (LastCheck) until the file changes or a later
// pass replaces it. A backup that vanishes meanwhile is left out; one
// changed while it is read is counted as Changed, with no result. It
// returns ErrNotFound when path names nothing, and ctx's error when it
// ends the pass early.
func (c *Catalog) Verify(ctx context.Context, path string, o VerifyOptions) (VerifySummary, error) {
	var sum VerifySummary
	top, err := c.Tree()
	if err != nil {
		return sum, err
	}
	todo, err := verifyTargets(top, path, &sum)
	if err != nil {
		return sum, err
	}
	if o.Started != nil {
		var total int64
		for _, t := range todo {
			total += t.size
		}
		o.Started(len(todo), total)
	}
	lim := newLimiter(o.Rate, o.clock, o.sleep)
	seen := make(map[string]bool, len(todo))
	for _, t := range todo {
		if err := ctx.Err(); err != nil {
			return sum, err
		}
		ch, version, ok := c.verifyOne(ctx, t.path, lim, o.Read)
		if !ok {
			continue
		}
		if ctx.Err() != nil && ch.Result == VerifyUnreadable {
			return sum, ctx.Err() // cut short, not unreadable
		}
		sum.Bytes += ch.Size
		if version == "" {
			sum.Changed++
			continue
		}
		sum.Files++
		switch ch.Result {
		case VerifyOK:
			sum.OK++
		case VerifyMismatch:
			sum.Mismatch++
		default:
			sum.Unreadable++
		}
		seen[t.path] = true
		c.keep(t.path, verified{result: ch.Result, at: ch.At, version: version})
		if o.Done != nil {
			o.Done(ch)
		}
	}
	if path == "" {
		c.forgetBut(seen)
	}
	return sum, nil
}

// target is one backup a pass reads.
type target struct {
	path string
	size int64
}

// verifyTargets lists the backups at or below path that have a recorded
// digest, counting the others in sum.NoSum.
func verifyTargets(top *Folder, path string, sum *VerifySummary) ([]target, error) {
	var todo []target
	add := func(f *Folder, b *Backup) {
		if b.SHA256 == "" {
			sum.NoSum++
			return
		}
		todo = append(todo, target{f.Path + b.Name, b.Size})
	}
	if f, err := top.Lookup(path); err == nil {
		f.Walk(func(sub *Folder) {
			for i := range sub.Backups {
				add(sub, &sub.Backups[i])
			}
		})
		return todo, nil
	}
	dir, name := "", path
	if i := strings.LastIndexByte(path, '/'); i >= 0 {
		dir, name = path[:i+1], path[i+1:]
	}
	f, err := top.Lookup(dir)
	if err != nil {
		return nil, ErrNotFound
	}
	for i := range f.Backups {
		if f.Backups[i].Name == name {
			add(f, &f.Backups[i])
			return todo, nil
		}
	}
	return nil, ErrNotFound
}

// verifyOne reads the backup at path and compares. It returns the check,
// the version of the file read ("" when the file changed while it was
// read), and false when the backup is gone or has no digest any more.
func (c *Catalog) verifyOne(ctx context.Context, path string, lim *limiter, read func(int)) (Check, string, bool) {
	ch := Check{Path: path}
	f, b, err := c.Open(path)
	if errors.Is(err, ErrNotFound) {
		return ch, "", false
	}
	if err != nil {
		ch.Result, ch.Err, ch.At = VerifyUnreadable, err, lim.now()
		return ch, "unopened", true
	}
	defer f.Close()
	if b.SHA256 == "" {
		return ch, "", false
	}
	ch.Want, ch.Size = b.SHA256, b.Size
	h := sha256.New()
	_, err = io.Copy(h, &limitedReader{ctx: ctx, r: f, lim: lim, read: read})
	ch.At = lim.now()
	if err != nil {
		ch.Result, ch.Err = VerifyUnreadable, fmt.Errorf("catalog: read %s: %w", path, err)
		return ch, b.Version(), true
	}
	if after, err := f.Stat(); err != nil || backupOf(b.Name, after).Version() != b.Version() {
		return ch, "", true
	}
	ch.Got = hex.EncodeToString(h.Sum(nil))
	ch.Result = VerifyMismatch
	if ch.Got == ch.Want {
		ch.Result = VerifyOK
	}
	return ch, b.Version(), true
}

// keep records the result of path.
func (c *Catalog) keep(path string, v verified) {
	c.checks.mu.Lock()
	defer c.checks.mu.Unlock()
	if c.checks.m == nil {
		c.checks.m = map[string]verified{}
	}
	c.checks.m[path] = v
}

// forgetBut drops the results of every backup a whole pass did not check
// (gone, or without a digest now).
func (c *Catalog) forgetBut(seen map[string]bool) {
	c.checks.mu.Lock()
	defer c.checks.mu.Unlock()
	for p := range c.checks.m {
		if !seen[p] {
			delete(c.checks.m, p)
		}
	}
}

// LastCheck returns the last result kept for the backup b at path, and
// when it was reached; false when there is none for the file as it is now
// (never checked, or changed since: a result about other bytes is not
// shown).
func (c *Catalog) LastCheck(path string, b Backup) (result string, at time.Time, ok bool) {
	c.checks.mu.Lock()
	v, ok := c.checks.m[path]
	c.checks.mu.Unlock()
	if !ok || (v.version != b.Version() && v.version != "unopened") {
		return "", time.Time{}, false
	}
	return v.result, v.at, true
}

// VerifyMismatches counts the backups, as they are now, whose last check
// found a digest other than the recorded one.
func (c *Catalog) VerifyMismatches() (int, error) {
	top, err := c.Tree()
	if err != nil {
		return 0, err
	}
	c.checks.mu.Lock()
	defer c.checks.mu.Unlock()
	if len(c.checks.m) == 0 {
		return 0, nil
	}
	n := 0
	top.Walk(func(f *Folder) {
		for i := range f.Backups {
			b := &f.Backups[i]
			if v, ok := c.checks.m[f.Path+b.Name]; ok && v.result == VerifyMismatch && v.version == b.Version() {
				n++
			}
		}
	})
	return n, nil
}
