package password

import (
	"crypto/rand"
	"fmt"
	"sync"
	"time"
)

// decoys memoises one decoy hash per work factor for the whole process.
var decoys struct {
	mu     sync.Mutex
	byCost map[int]*decoy
}

// decoy is one memoised hash; its own mutex lets different costs be
// computed at the same time while callers of the same cost wait for one
// computation.
type decoy struct {
	mu   sync.Mutex
	hash string
	took time.Duration // how long computing hash took
}

// DecoyHash returns a valid bcrypt hash, at the given cost, of a random
// password that is thrown away at once, so nothing matches it. It exists so
// that checking a password for a user name that does not exist costs the same
// bcrypt work as checking one for a user that does (see Verifier.CheckDecoy).
//
// The hash is computed on the first call for a cost and memoised for the
// life of the process; that first call therefore costs one bcrypt
// computation, and callers should make it at start-up (for example with the
// cost of the configured hashes) so that no request pays it. A cost outside
// MinCost..MaxCost is clamped into that range. It returns "" only if the
// system's random source fails, which Go treats as fatal on current systems.
func DecoyHash(cost int) string {
	h, err := decoyHash(cost)
	if err != nil {
		return ""
	}
	return h
}

// CheckTime returns how long one bcrypt check at cost takes on this
// machine, as measured when the decoy hash of that cost was computed
// (computing it now if it was not yet: one bcrypt computation). Callers
// derive from it how long an attempt may wait for the verdicts of others
// (see throttle.Options.Wait).
func CheckTime(cost int) time.Duration {
	d, err := decoyOf(cost)
	if err != nil {
		return 0
	}
	return d.took
}

// decoyHash is DecoyHash with its error, for callers that must report it.
func decoyHash(cost int) (string, error) {
	d, err := decoyOf(cost)
	if err != nil {
		return "", err
	}
	return d.hash, nil
}

// decoyOf returns the memoised decoy of cost, computing it on first use.
func decoyOf(cost int) (*decoy, error) {
	cost = min(max(cost, MinCost), MaxCost)

	decoys.mu.Lock()
	if decoys.byCost == nil {
		decoys.byCost = make(map[int]*decoy)
	}
	d := decoys.byCost[cost]
	if d == nil {
		d = &decoy{}
		decoys.byCost[cost] = d
	}
	decoys.mu.Unlock()

	d.mu.Lock()
	defer d.mu.Unlock()
	if d.hash != "" {
		return d, nil
	}
	// rand.Text gives 26 characters (130 bits) of randomness, well
	// within MaxLen.
	start := time.Now()
	h, err := Hash([]byte(rand.Text()), cost)
	if err != nil {
		return nil, fmt.Errorf("password: making the decoy hash: %w", err)
	}
	d.hash, d.took = h, time.Since(start)
	return d, nil
}
