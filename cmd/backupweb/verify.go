package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"

	"github.com/backupweb/backupweb/internal/catalog"
	"github.com/backupweb/backupweb/internal/config"
	"github.com/backupweb/backupweb/internal/ui"
)

// runVerify is `backupweb verify -config F [PATH]`: read every backup
// below PATH (a folder or a backup inside [backups] dir; the whole folder
// when absent) that has a recorded SHA-256 and compare. One line per
// mismatch or unreadable file on standard output, a summary last; on a
// terminal, progress on standard error. Exit 1 on any mismatch or
// unreadable file, or a configuration that cannot be used; 2 on wrong
// usage. It reads as fast as the disk goes: verify_rate bounds the
// service's own pass only.
func runVerify(c *cli, args []string) int {
	fs := c.flagSet("verify")
	path := configFlag(fs)
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() > 1 {
		fmt.Fprintln(c.stderr, "backupweb verify: takes at most one PATH, a folder or a backup inside [backups] dir; got", fs.Args())
		return exitUsage
	}
	below := strings.TrimPrefix(strings.TrimPrefix(fs.Arg(0), "./"), "/backups/")
	cfg := config.Load(*path, c.lookupEnv)
	if printProblems(c.stderr, cfg.Report) > 0 {
		fmt.Fprintln(c.stderr, "backupweb verify: the configuration cannot be used")
		return exitError
	}
	cat := catalog.New(cfg.Backups.Dir)
	defer cat.Close()
	p := newProgress(c.stderr)
	sum, err := cat.Verify(c.ctx, below, catalog.VerifyOptions{
		Started: p.start,
		Read:    p.read,
		Done: func(ch catalog.Check) {
			p.done()
			switch ch.Result {
			case catalog.VerifyMismatch:
				p.clear()
				fmt.Fprintf(c.stdout, "mismatch: %s: read %s, recorded %s\n", ch.Path, ch.Got, ch.Want)
			case catalog.VerifyUnreadable:
				p.clear()
				fmt.Fprintf(c.stdout, "unreadable: %s: %v\n", ch.Path, ch.Err)
			}
		},
	})
	p.clear()
	if errors.Is(err, catalog.ErrNotFound) {
		fmt.Fprintf(c.stderr, "backupweb verify: %q is neither a folder nor a backup inside %s\n", below, cfg.Backups.Dir)
		return exitError
	}
	if err != nil {
		fmt.Fprintf(c.stderr, "backupweb verify: %v\n", err)
		return exitError
	}
	fmt.Fprintf(c.stdout, "verified %d backup%s (%s): %d ok, %d mismatch, %d unreadable; %d changed while read, %d without a recorded checksum\n",
		sum.Files, plural(sum.Files), ui.HumanSize(sum.Bytes), sum.OK, sum.Mismatch, sum.Unreadable, sum.Changed, sum.NoSum)
	if sum.Mismatch > 0 || sum.Unreadable > 0 {
		return exitError
	}
	return exitOK
}

// progress writes one line that rewrites itself ("\r") on a terminal, at
// most every tenth of a second: files done of the total, bytes read. On
// anything but a terminal it writes nothing.
type progress struct {
	w     io.Writer // nil: not a terminal
	mu    sync.Mutex
	files int
	total int
	bytes int64
	size  int64
	last  time.Time
	shown bool
}

func newProgress(stderr io.Writer) *progress {
	p := &progress{}
	if f, ok := stderr.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		p.w = stderr
	}
	return p
}

func (p *progress) start(files int, size int64) {
	p.mu.Lock()
	p.total, p.size = files, size
	p.mu.Unlock()
}

func (p *progress) read(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.bytes += int64(n)
	p.show(false)
}

func (p *progress) done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.files++
	p.show(p.files == p.total)
}

// show writes the line, when on a terminal and due (or now).
func (p *progress) show(now bool) {
	if p.w == nil || !now && time.Since(p.last) < 100*time.Millisecond {
		return
	}
	p.last = time.Now()
	fmt.Fprintf(p.w, "\r\x1b[Kverifying: %d of %d backups, %s of %s", p.files, p.total, ui.HumanSize(p.bytes), ui.HumanSize(p.size))
	p.shown = true
}

// clear removes the line before other output.
func (p *progress) clear() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.w != nil && p.shown {
		fmt.Fprint(p.w, "\r\x1b[K")
		p.shown = false
	}
}
