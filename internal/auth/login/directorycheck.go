package login

import (
	"container/list"
	"context"
	"sync"
	"time"

	"github.com/backupweb/backupweb/internal/directory"
)

// DirectoryCheckTTL is how long the directory's "yes" to a user admitted
// without a password (a machine token) is trusted: at most one directory
// lookup per user in that time, so a removed or disabled user's tokens
// stop working within it, and group changes are seen within it.
const DirectoryCheckTTL = time.Minute

// directoryCheckSize bounds the users whose lookups are remembered.
const directoryCheckSize = 1024

// directoryChecks remembers the directory's recent "yes" to a name asked
// without a password (directory.Lookup), with what it said of the user,
// for DirectoryCheckTTL. A "no" and an error are never remembered. Keys
// are the directory's spelling of the name.
type directoryChecks struct {
	now func() time.Time

	mu    sync.Mutex
	items map[string]*list.Element
	order *list.List // front: most recently used
}

type directoryCheck struct {
	name    string
	entry   directory.Entry
	expires time.Time
}

func newDirectoryChecks(now func() time.Time) *directoryChecks {
	return &directoryChecks{now: now, items: map[string]*list.Element{}, order: list.New()}
}

// get returns what was remembered of name, if it is still fresh.
func (c *directoryChecks) get(name string) (directory.Entry, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.items[name]
	if !ok {
		return directory.Entry{}, false
	}
	e := el.Value.(*directoryCheck)
	if !c.now().Before(e.expires) {
		c.order.Remove(el)
		delete(c.items, name)
		return directory.Entry{}, false
	}
	c.order.MoveToFront(el)
	return e.entry, true
}

// add remembers the directory's entry for name.
func (c *directoryChecks) add(name string, e directory.Entry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[name]; ok {
		c.order.Remove(el)
	}
	c.items[name] = c.order.PushFront(&directoryCheck{name: name, entry: e, expires: c.now().Add(DirectoryCheckTTL)})
	for c.order.Len() > directoryCheckSize {
		old := c.order.Back()
		c.order.Remove(old)
		delete(c.items, old.Value.(*directoryCheck).name)
	}
}

// purge forgets everything (a reload).
func (c *directoryChecks) purge() {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.items)
	c.order.Init()
}

// forget drops what was remembered of name.
func (c *directoryChecks) forget(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[name]; ok {
		c.order.Remove(el)
		delete(c.items, name)
	}
}

// directoryUser reports whether name (the directory's spelling, as tokens
// and factors are keyed) is still a user of the directory, not disabled,
// with its groups and e-mail address: from a lookup of the last
// DirectoryCheckTTL, else asked again (fresh true: always asked). A
// directory that does not answer is an error (a 503, logged once here),
// never a "yes"; a name the directory now spells otherwise is a "no".
func (p *Provider) directoryUser(ctx context.Context, name string, fresh bool) (directory.Entry, bool, error) {
	if !fresh {
		if e, ok := p.dchecks.get(name); ok {
			return e, true, nil
		}
	}
	e, ok, err := p.dir.Lookup(ctx, name)
	if err != nil {
		p.log.ErrorContext(ctx, "auth: the directory did not answer; user not admitted", "auth_type", Name, "directory", p.dir.URL(), "user", name, "err", err)
		return directory.Entry{}, false, err
	}
	if !ok || e.Name != name {
		p.dchecks.forget(name)
		return directory.Entry{}, false, nil
	}
	e.Email = cleanEmail(e.Email)
	p.dchecks.add(name, e)
	return e, true, nil
}
