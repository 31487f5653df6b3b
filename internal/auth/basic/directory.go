package basic

import (
	"container/list"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/backupweb/backupweb/internal/attrs"
	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/directory"
)

// Where users and their passwords are checked: [authentication] users.
const (
	// UsersFromConfig is the one user of Username and Password, the
	// default ("file", as for flask-login).
	UsersFromConfig = "file"
	// UsersFromDirectory is an LDAP directory ([ldap], package directory).
	UsersFromDirectory = "ldap"
)

// dirCacheSize bounds the directory credentials remembered.
const dirCacheSize = 1024

// dirCache remembers the directory's "yes" to a (name, password) for
// CacheTTL, with what it said of the user, so that a Basic client, which
// sends its password with every request, costs the directory one bind per
// cache lifetime rather than one per request. Keys are HMAC-SHA256 tags
// of name and password under a key drawn at random when it is made: it
// holds neither. A "no" is never remembered.
type dirCache struct {
	key []byte
	ttl time.Duration
	now func() time.Time

	mu    sync.Mutex
	items map[[32]byte]*list.Element
	order *list.List // front: most recently used
	gen   uint64     // purges; a check begun before one adds nothing
}

type dirEntry struct {
	key     [32]byte
	user    auth.User
	expires time.Time
}

func newDirCache(ttl time.Duration, now func() time.Time) *dirCache {
	key := make([]byte, 32)
	_, _ = rand.Read(key) // never fails (see crypto/rand)
	return &dirCache{key: key, ttl: ttl, now: now, items: map[[32]byte]*list.Element{}, order: list.New()}
}

// tag is the cache key of name and pw.
func (c *dirCache) tag(name, pw string) (k [32]byte) {
	m := hmac.New(sha256.New, c.key)
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(name)))
	m.Write(n[:])
	m.Write([]byte(name))
	m.Write([]byte(pw))
	m.Sum(k[:0])
	return k
}

// get returns the user remembered for name and pw, and the purge count
// to hand to add after a check.
func (c *dirCache) get(name, pw string) (auth.User, bool, uint64) {
	k := c.tag(name, pw)
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.items[k]
	if !ok {
		return auth.User{}, false, c.gen
	}
	e := el.Value.(*dirEntry)
	if !c.now().Before(e.expires) {
		c.order.Remove(el)
		delete(c.items, k)
		return auth.User{}, false, c.gen
	}
	c.order.MoveToFront(el)
	return e.user, true, c.gen
}

// add remembers that the directory admitted name and pw as u, unless the
// cache was purged since gen.
func (c *dirCache) add(name, pw string, u auth.User, gen uint64) {
	k := c.tag(name, pw)
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.gen {
		return
	}
	if el, ok := c.items[k]; ok {
		c.order.Remove(el)
	}
	c.items[k] = c.order.PushFront(&dirEntry{key: k, user: u, expires: c.now().Add(c.ttl)})
	for c.order.Len() > dirCacheSize {
		old := c.order.Back()
		c.order.Remove(old)
		delete(c.items, old.Value.(*dirEntry).key)
	}
}

// purge forgets everything.
func (c *dirCache) purge() {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.items)
	c.order.Init()
	c.gen++
}

// cachedDirectory returns the user the directory admitted for user and
// pass within the cache's lifetime.
func (p *Provider) cachedDirectory(user, pass string) (auth.User, bool) {
	if p.dir == nil {
		return auth.User{}, false
	}
	u, ok, _ := p.dcache.get(user, pass)
	return u, ok
}

// checkDirectory asks the directory about user and pass, and remembers a
// "yes". A directory that does not answer is an error (503), logged
// once, never a fallback.
func (p *Provider) checkDirectory(ctx context.Context, user, pass string) (auth.User, bool, error) {
	_, _, gen := p.dcache.get(user, pass)
	e, ok, err := p.dir.SignIn(ctx, user, []byte(pass))
	if err != nil {
		p.log.ErrorContext(ctx, "auth: the directory did not answer; sign-in refused", "auth_type", Name, "directory", p.dir.URL(), "err", err)
		return auth.User{}, false, err
	}
	if !ok {
		return auth.User{}, false, nil
	}
	u := auth.User{Name: e.Name, Type: Name, Groups: e.Groups}
	if e.Email != "" && len(e.Email) <= 254 && !strings.ContainsFunc(e.Email, unicode.IsControl) {
		u.Attrs = attrs.Of(map[string]string{"email": e.Email})
	}
	p.dcache.add(user, pass, u, gen)
	return u, true, nil
}

// throttleName is the name an attempt counts against: the directory
// compares names without regard to letter case.
func (p *Provider) throttleName(name string) string {
	if p.dir != nil {
		return strings.ToLower(name)
	}
	return name
}

// Ready reports whether the directory answers (users = ldap), for
// /readyz; with one configured user there is nothing to wait for.
func (p *Provider) Ready(ctx context.Context) error {
	if p.dir == nil {
		return nil
	}
	if err := p.dir.Ready(ctx); err != nil {
		why := err.Error()
		if de, ok := err.(*directory.Error); ok {
			why = de.URL + ": " + de.Why
		}
		return &auth.NotReady{Part: "the directory does not answer (" + why + ")"}
	}
	return nil
}

// Close closes the directory's connections (users = ldap).
func (p *Provider) Close() error {
	if p.dir != nil {
		return p.dir.Close()
	}
	return nil
}
