// Package basic is authentication type basic: HTTP Basic authentication
// (RFC 7617) with one configured user, for browsers and API clients alike.
//
// Credentials come with every request, and a bcrypt hash at the
// recommended cost 12 takes a large fraction of a second of CPU to
// check, so successful verifications are cached by package password (keyed
// by a keyed hash, bounded, expiring, never holding the password). Wrong
// passwords always pay the full bcrypt cost, run through a gate that caps
// concurrent bcrypt work, and are throttled per client address with 429 and
// Retry-After, so a flood of guesses neither succeeds quickly nor takes the
// CPU from everyone else. There is no logout: browsers keep sending the
// credentials until they are closed.
package basic

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/auth/passwordauth"
	"github.com/backupweb/backupweb/internal/password"
	"github.com/backupweb/backupweb/internal/peer"
	"github.com/backupweb/backupweb/internal/refusal"
	"github.com/backupweb/backupweb/internal/throttle"
)

// Name is the type's name in configuration.
const Name = "basic"

// Defaults of Config, for fields left zero.
const (
	// DefaultRealm is the realm shown in the browser's password prompt.
	DefaultRealm = "backupweb"
	// DefaultCacheTTL is how long a verified credential is trusted without
	// running bcrypt again.
	DefaultCacheTTL = 5 * time.Minute
)

// Config is the typed configuration of a Basic provider.
type Config struct {
	// Username is the one accepted user name. Required.
	Username string
	// Password is the accepted password: a bcrypt hash ($2a$, $2b$ or $2y$)
	// when UseBcrypt is true, else the password itself. Required.
	Password string
	// UseBcrypt tells whether Password is a bcrypt hash. Default false, as
	// as Flask-era files assume; plain passwords draw a start-up warning.
	UseBcrypt bool
	// Realm is the text of the browser's prompt. Default DefaultRealm.
	Realm string
	// Throttling is the failure limit by client address (max_failures,
	// failure_window, attempt_wait), with its defaults.
	passwordauth.Throttling
	// CacheTTL is how long a verified credential is trusted without running
	// bcrypt again. Default DefaultCacheTTL.
	CacheTTL time.Duration
}

// Provider checks HTTP Basic credentials against one user.
type Provider struct {
	cfg      Config
	userSum  [sha256.Size]byte
	cost     int // bcrypt cost of cfg.Password, for decoy checks
	verifier *password.Verifier
	match    password.Matcher // bcrypt or plain, chosen at load by use_bcrypt
	limiter  *throttle.Swap
	// counter makes the failure counter of a reload's limits
	// (SetThrottling); limits are those in force.
	counter func(t passwordauth.Throttling) throttle.Counter
	limits  atomic.Pointer[passwordauth.Throttling]
	log     *slog.Logger
	audit   auth.Audit // refusals logged and counted
	errs    *refusal.Errors
	now     func() time.Time
	header  string // WWW-Authenticate value
	flights *flights
}

var (
	_ auth.Provider = (*Provider)(nil)
	_ auth.Reloader = (*Provider)(nil)
)

// WithDefaults returns c with its unset fields at their defaults: the
// one place the defaults of type basic are applied (New and the
// configuration's loader both call it).
func (c Config) WithDefaults() Config {
	if c.Realm == "" {
		c.Realm = DefaultRealm
	}
	c.Throttling = c.Throttling.WithDefaults()
	if c.CacheTTL <= 0 {
		c.CacheTTL = DefaultCacheTTL
	}
	return c
}

// Users returns the one user c admits: its Username.
func (c Config) Users() []string { return []string{c.Username} }

// New returns a Provider for cfg, its zero fields taking the defaults. It
// refuses a configuration Validate refuses (an empty or malformed hash is
// an error here, not a 500 at every request).
func New(cfg Config, deps auth.Deps) (*Provider, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("basic: %w", err)
	}
	count, err := passwordauth.Counters(deps)
	if err != nil {
		return nil, fmt.Errorf("basic: %w", err)
	}
	cost := password.Cost
	if cfg.UseBcrypt {
		if c, err := password.ParseHash(cfg.Password); err == nil {
			cost = c
		}
	}
	p := &Provider{
		cfg:      cfg,
		userSum:  sha256.Sum256([]byte(cfg.Username)),
		cost:     cost,
		verifier: password.NewVerifier(password.VerifierOptions{CacheTTL: cfg.CacheTTL, Now: deps.Clock(), Observer: deps.Hooks.Password}),
		log:      deps.Log(),
		audit:    deps.Audit(),
		errs:     deps.Errs(),
		now:      deps.Clock(),
		header:   `Basic realm="` + quoteRealm(cfg.Realm) + `"`,
		flights:  newFlights(),
	}
	p.match = password.NewMatcher(cfg.UseBcrypt, p.verifier)
	p.counter = func(t passwordauth.Throttling) throttle.Counter {
		return count(Name+".addr", throttle.Options{
			Max: t.MaxFailures, Window: t.FailureWindow, Now: deps.Clock(),
			Wait:   t.Wait(cfg.UseBcrypt, cost),
			OnFull: func() { auth.LogFlood(deps.Log(), Name, "client addresses") },
		})
	}
	p.limiter = throttle.NewSwap(p.counter(cfg.Throttling))
	p.limits.Store(&cfg.Throttling)
	return p, nil
}

// Type returns "basic".
func (p *Provider) Type() string { return Name }

// Identify checks r's Basic credentials. A request without any is simply
// not admitted; wrong or malformed ones are logged as refused attempts and
// counted against the client address. A blocked address gets a
// *refusal.RetryError before any work is spent on it. A credential the
// verification cache remembers is admitted without an attempt slot; any
// other attempt holds one of the address's slots while it is checked,
// waiting a bounded time for one when others hold them all (see package
// throttle), and only a wrong credential is recorded as a failure.
func (p *Provider) Identify(r *http.Request) (auth.User, bool, error) {
	user, pass, perr := ParseAuthorization(r.Header.Get("Authorization"))
	if errors.Is(perr, ErrNoCredentials) {
		return auth.User{}, false, nil
	}
	ctx := r.Context()
	client := throttle.AddrKey(peer.Of(r).Addr) // an IPv6 client counts per /64
	v, err := p.limiter.Check(ctx, client)
	if err != nil {
		// Not counted, so not checked: fail closed.
		return auth.User{}, false, fmt.Errorf("basic: counting the attempt: %w", err)
	}
	if err := passwordauth.Admit(p.audit, r, Name, v, client, user); err != nil {
		return auth.User{}, false, err
	}
	if perr == nil && p.userIs(user) && p.match.Cached(ctx, p.cfg.Password, []byte(pass)) {
		return auth.User{Name: p.cfg.Username, Type: Name}, true, nil
	}
	if perr == nil {
		// The same credential being checked by another request: wait for
		// that check rather than take a slot (see flights).
		name := p.flights.name(user, pass)
		lead, done := p.flights.join(name)
		if lead {
			defer p.flights.land(name)
		} else {
			select {
			case <-done:
			case <-ctx.Done():
				return auth.User{}, false, fmt.Errorf("basic: waiting for the same credential's check: %w", ctx.Err())
			}
			if p.userIs(user) && p.match.Cached(ctx, p.cfg.Password, []byte(pass)) {
				return auth.User{Name: p.cfg.Username, Type: Name}, true, nil
			}
		}
	}
	if v, err = p.limiter.Acquire(ctx, client); err != nil {
		return auth.User{}, false, fmt.Errorf("basic: counting the attempt: %w", err)
	}
	if err := passwordauth.Admit(p.audit, r, Name, v, client, user); err != nil {
		return auth.User{}, false, err
	}
	settled := false
	defer func() {
		if !settled { // no verdict (an error, a panic): the slot goes back
			p.release(r, v.Slot)
		}
	}()
	if perr != nil {
		settled = true
		p.fail(r, v.Slot)
		p.audit.Refused(r, Name, auth.ReasonMalformed, "")
		return auth.User{}, false, nil
	}
	cctx, cancel := context.WithTimeout(ctx, throttle.MaxCheck)
	defer cancel()
	ok, err := p.check(cctx, user, pass)
	if err != nil {
		// Not a verdict: the attempt is not held against the client.
		return auth.User{}, false, fmt.Errorf("basic: verifying password: %w", err)
	}
	if !ok {
		settled = true
		p.fail(r, v.Slot)
		reason := auth.ReasonBadCredentials
		if p.cfg.UseBcrypt && len(pass) > password.MaxLen {
			reason = auth.ReasonTooLong
		}
		p.audit.Refused(r, Name, reason, user)
		return auth.User{}, false, nil
	}
	return auth.User{Name: p.cfg.Username, Type: Name}, true, nil
}

// release gives back the slot of an attempt that succeeded or got no
// verdict. Failing to is logged: the slot then stays taken until its
// lease runs out (a shared store), which errs on the safe side.
func (p *Provider) release(r *http.Request, s throttle.Slot) {
	if err := p.limiter.Release(context.WithoutCancel(r.Context()), s); err != nil {
		p.log.WarnContext(r.Context(), "auth: giving back an attempt slot failed", "auth_type", Name, "err", err)
	}
}

// fail records the failure of the attempt holding s.
func (p *Provider) fail(r *http.Request, s throttle.Slot) {
	if _, err := p.limiter.Fail(context.WithoutCancel(r.Context()), s); err != nil {
		p.log.WarnContext(r.Context(), "auth: recording a failed attempt failed", "auth_type", Name, "err", err)
	}
}

// userIs compares user with the configured name in constant time.
func (p *Provider) userIs(user string) bool {
	sum := sha256.Sum256([]byte(user))
	return subtle.ConstantTimeCompare(sum[:], p.userSum[:]) == 1
}

// check compares user and pass with the configuration. The user name is
// compared in constant time, and a wrong one still costs a full bcrypt
// check against a decoy hash, so neither timing nor the cache tells an
// attacker whether the name was right.
func (p *Provider) check(ctx context.Context, user, pass string) (bool, error) {
	if !p.userIs(user) {
		return false, p.match.Decoy(ctx, p.cost, []byte(pass))
	}
	return p.match.Match(ctx, p.cfg.Password, []byte(pass))
}

// Challenge answers 401 with the WWW-Authenticate header that makes
// browsers show their password prompt with the configured realm.
func (p *Provider) Challenge(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("WWW-Authenticate", p.header)
	p.errs.Refuse(w, r, refusal.AskPassword)
}

// Reload empties the verification cache, lifts every throttling block and
// forgets every failure count. The program calls it on SIGHUP, so an
// operator can force every credential to be checked afresh and let a
// locked-out client in without a restart.
func (p *Provider) Reload() error {
	p.verifier.Purge()
	n, err := p.limiter.Clear(context.Background())
	if err != nil {
		p.log.Error("auth: lifting throttling blocks on SIGHUP failed", "auth_type", Name, "err", err)
	}
	p.log.Info("auth: reloaded on SIGHUP: credential cache emptied, throttling blocks lifted and counts forgotten", "auth_type", Name, "blocks_cleared", n)
	return nil
}

// quoteRealm escapes a realm for a quoted-string (RFC 9110): backslash and
// double quote get a backslash. Validate refuses control characters.
func quoteRealm(s string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s)
}
