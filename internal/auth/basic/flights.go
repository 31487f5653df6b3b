package basic

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"sync"
)

// flights lets concurrent first requests with one credential wait for the
// one of them that checks it, without taking attempt slots of their own:
// a burst of a browser's or a script's parallel requests costs one slot
// and one bcrypt check, and none of them is refused because the others
// are in flight (however long that check takes on a loaded machine).
// Requests join only a check of exactly their own user name and password
// (an HMAC under a key made at start names it, so no password or plain
// hash of one is kept); when the check they waited for did not leave the
// credential in the verification cache (a wrong password, a refusal, an
// error), they go on as every request does: through the throttle.
type flights struct {
	key [32]byte
	mu  sync.Mutex
	m   map[[sha256.Size]byte]chan struct{}
}

func newFlights() *flights {
	f := &flights{m: map[[sha256.Size]byte]chan struct{}{}}
	rand.Read(f.key[:]) // never fails (crypto/rand)
	return f
}

// name returns the flight's name of (user, pass).
func (f *flights) name(user, pass string) (n [sha256.Size]byte) {
	m := hmac.New(sha256.New, f.key[:])
	var l [8]byte
	binary.BigEndian.PutUint64(l[:], uint64(len(user)))
	m.Write(l[:])
	m.Write([]byte(user))
	m.Write([]byte(pass))
	m.Sum(n[:0])
	return n
}

// join makes the caller the checker of name when nobody checks it (lead
// true: call land when done), or returns the channel closed when the
// current checker is done.
func (f *flights) join(name [sha256.Size]byte) (lead bool, done <-chan struct{}) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if ch, ok := f.m[name]; ok {
		return false, ch
	}
	f.m[name] = make(chan struct{})
	return true, nil
}

// land ends the check of name: its waiters look at the cache again.
func (f *flights) land(name [sha256.Size]byte) {
	f.mu.Lock()
	ch := f.m[name]
	delete(f.m, name)
	f.mu.Unlock()
	if ch != nil {
		close(ch)
	}
}
