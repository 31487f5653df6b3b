package directory

import (
	"context"
	"sync"

	"github.com/go-ldap/ldap/v3"
)

// pool holds the service account's connections: at most size in use or
// idle at once. A caller waits for one (as long as its context allows)
// rather than open more, so a flood of sign-ins never opens a flood of
// connections to the directory.
type pool struct {
	url   string        // the directory's, for errors
	slots chan struct{} // one per connection that may exist
	dial  func(context.Context) (*ldap.Conn, error)

	mu     sync.Mutex
	idle   []*ldap.Conn
	closed bool
}

func newPool(url string, size int, dial func(context.Context) (*ldap.Conn, error)) *pool {
	return &pool{url: url, slots: make(chan struct{}, size), dial: dial}
}

// get returns an idle connection or a new one, waiting for room while
// ctx allows.
func (p *pool) get(ctx context.Context) (*ldap.Conn, error) {
	select {
	case p.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, &Error{URL: p.url, Op: "waiting for a connection", Why: "timeout", Err: ctx.Err()}
	}
	p.mu.Lock()
	for len(p.idle) > 0 {
		c := p.idle[len(p.idle)-1]
		p.idle = p.idle[:len(p.idle)-1]
		if !c.IsClosing() {
			p.mu.Unlock()
			return c, nil
		}
		c.Close()
	}
	p.mu.Unlock()
	c, err := p.dial(ctx)
	if err != nil {
		<-p.slots
		return nil, err
	}
	return c, nil
}

// put gives c back: kept for the next caller when healthy (it is bound as
// the service account and answered its last request), else closed.
func (p *pool) put(c *ldap.Conn, healthy bool) {
	p.mu.Lock()
	if healthy && !p.closed && !c.IsClosing() {
		p.idle = append(p.idle, c)
		c = nil
	}
	p.mu.Unlock()
	if c != nil {
		c.Close()
	}
	<-p.slots
}

// close closes the idle connections and makes put close the others.
func (p *pool) close() {
	p.mu.Lock()
	idle := p.idle
	p.idle, p.closed = nil, true
	p.mu.Unlock()
	for _, c := range idle {
		c.Close()
	}
}
