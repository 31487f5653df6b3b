// Package basic is authentication type basic: HTTP Basic authentication
// (RFC 7617) with one configured user, for browsers and API clients alike.
//
// Credentials come with every request, and a bcrypt hash at the
// recommended cost 12 takes a large fraction of a second of CPU to
// check, so successful verifications are cached by package password (keyed
// by a keyed hash, bounded, expiring, never holding the password). Wrong
// passwords always pay the full bcrypt cost, run through a gate that caps
// concurrent bcrypt work, and are throttled per client address and per user
// name (an address the name signed in from before counting on its own, see
// known.go) with 429 and Retry-After, so a flood of guesses from one address
// or from many neither succeeds quickly nor takes the CPU from everyone
// else. There is no logout: browsers keep sending the credentials until
// they are closed.
package basic

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/auth/passwordauth"
	"github.com/backupweb/backupweb/internal/directory"
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
	// DefaultMaxUserFailures is how many wrong verdicts one user name may
	// receive from addresses it is not known at within the window.
	DefaultMaxUserFailures = 5
	// DefaultKnownAddressDays is how long an address a name signed in from
	// is counted on its own for that name.
	DefaultKnownAddressDays = 30
)

// maxUserBlock caps how long repeated failures can hold one user name off
// (as for flask-login): anyone can make a name fail, and a block of the
// name also holds off its rightful user at a new address.
const maxUserBlock = time.Hour

// Config is the typed configuration of a Basic provider.
type Config struct {
	// UsersFrom says where users and passwords are checked: UsersFromConfig
	// (default: Username and Password) or UsersFromDirectory (Directory,
	// every user of the directory).
	UsersFrom string
	// Directory is the [ldap] section, with UsersFrom = UsersFromDirectory.
	Directory directory.Config
	// Username is the one accepted user name. Required with users from
	// the configuration.
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
	// MaxUserFailures is how many wrong verdicts one user name may receive
	// within the failure window, from every address together but those it
	// is known at (max_user_failures); beyond it the name's attempts are
	// answered 429 without a check. Default DefaultMaxUserFailures.
	MaxUserFailures int
	// KnownAddressDays is how many days an address (an IPv6 /64) that
	// signed in as a name stays known for it: its attempts at that name
	// are counted on their own, MaxUserFailures of them, instead of with
	// everyone's (known_address_days). Default DefaultKnownAddressDays.
	KnownAddressDays int
	// CacheTTL is how long a verified credential is trusted without running
	// bcrypt again. Default DefaultCacheTTL.
	CacheTTL time.Duration
}

// cred is the credential in force and what is derived from it; a reload
// replaces it whole (SetCredentials).
type cred struct {
	username  string
	userSum   [sha256.Size]byte
	password  string
	useBcrypt bool
	cost      int              // bcrypt cost of password, for decoy checks
	match     password.Matcher // bcrypt or plain, chosen by use_bcrypt
	known     []byte           // key of the known-address records (knownKey)
}

// Provider checks HTTP Basic credentials against one user.
type Provider struct {
	cfg      Config
	cred     atomic.Pointer[cred]
	secret   []byte // the program's secret key, when it has one
	verifier *password.Verifier
	limiter  *throttle.Swap // failures per client address
	byUser   *throttle.Swap // failures per user name, from unknown addresses
	byKnown  *throttle.Swap // failures per user name and known address
	// counters makes the failure counters of a reload's limits
	// (SetThrottling); limits are those in force.
	counters func(t limits) (addr, user, known throttle.Counter)
	limits   atomic.Pointer[limits]
	marks    marks
	log      *slog.Logger
	audit    auth.Audit // refusals logged and counted
	errs     *refusal.Errors
	now      func() time.Time
	header   string // WWW-Authenticate value
	flights  *flights
	// dir is the directory users sign in against (users = ldap), nil
	// with one configured user; dcache remembers its "yes".
	dir    *directory.Directory
	dcache *dirCache
}

// limits are the throttling keys in force.
type limits struct {
	passwordauth.Throttling
	maxUser int
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
	if c.UsersFrom == "" {
		c.UsersFrom = UsersFromConfig
	}
	if c.UsersFrom == UsersFromDirectory {
		c.Directory = c.Directory.WithDefaults()
	}
	c.Throttling = c.Throttling.WithDefaults()
	if c.MaxUserFailures <= 0 {
		c.MaxUserFailures = DefaultMaxUserFailures
	}
	if c.KnownAddressDays <= 0 {
		c.KnownAddressDays = DefaultKnownAddressDays
	}
	if c.CacheTTL <= 0 {
		c.CacheTTL = DefaultCacheTTL
	}
	return c
}

// Users returns the one user c admits: its Username; none when the
// users are the directory's.
func (c Config) Users() []string {
	if c.UsersFrom == UsersFromDirectory {
		return nil
	}
	return []string{c.Username}
}

// New returns a Provider for cfg, its zero fields taking the defaults. It
// refuses a configuration Validate refuses (an empty or malformed hash is
// an error here, not a 500 at every request). Known addresses are kept in
// the shared state when deps has one, else in this process and in
// KnownFile in deps.StateDir (when set).
func New(cfg Config, deps auth.Deps) (*Provider, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("basic: %w", err)
	}
	count, err := passwordauth.Counters(deps)
	if err != nil {
		return nil, fmt.Errorf("basic: %w", err)
	}
	var m marks
	if deps.Shared != nil {
		sm, ok := deps.Shared.(SharedMarks)
		if !ok {
			return nil, errors.New("basic: the shared state keeps no records: known addresses need them")
		}
		m = sharedMarks{sm}
	} else {
		path := ""
		if deps.StateDir != "" {
			path = filepath.Join(deps.StateDir, KnownFile)
		}
		m = newLocalMarks(path, deps.Clock(), deps.Log())
	}
	var dir *directory.Directory
	if cfg.UsersFrom == UsersFromDirectory {
		if dir, err = directory.New(cfg.Directory); err != nil {
			return nil, fmt.Errorf("basic: [ldap]: %w", err)
		}
	}
	p := &Provider{
		cfg:      cfg,
		dir:      dir,
		dcache:   newDirCache(cfg.CacheTTL, deps.Clock()),
		secret:   deps.SecretKey,
		verifier: password.NewVerifier(password.VerifierOptions{CacheTTL: cfg.CacheTTL, Now: deps.Clock(), Observer: deps.Hooks.Password}),
		marks:    m,
		log:      deps.Log(),
		audit:    deps.Audit(),
		errs:     deps.Errs(),
		now:      deps.Clock(),
		header:   `Basic realm="` + quoteRealm(cfg.Realm) + `"`,
		flights:  newFlights(),
	}
	p.cred.Store(p.newCred(cfg))
	p.counters = func(t limits) (addr, user, known throttle.Counter) {
		c := p.cred.Load()
		wait := t.Wait(c.useBcrypt, c.cost)
		addr = count(Name+".addr", throttle.Options{
			Max: t.MaxFailures, Window: t.FailureWindow, Now: deps.Clock(), Wait: wait,
			OnFull: func() { auth.LogFlood(deps.Log(), Name, "client addresses") },
		})
		user = count(Name+".user", throttle.Options{
			Max: t.maxUser, Window: t.FailureWindow, MaxBlock: maxUserBlock, Now: deps.Clock(), Wait: wait,
			OnFull: func() { auth.LogFlood(deps.Log(), Name, "user names") },
		})
		known = count(Name+".known", throttle.Options{
			Max: t.maxUser, Window: t.FailureWindow, MaxBlock: maxUserBlock, Now: deps.Clock(), Wait: wait,
			OnFull: func() { auth.LogFlood(deps.Log(), Name, "known addresses") },
		})
		return addr, user, known
	}
	l := limits{cfg.Throttling, cfg.MaxUserFailures}
	addr, user, known := p.counters(l)
	p.limiter, p.byUser, p.byKnown = throttle.NewSwap(addr), throttle.NewSwap(user), throttle.NewSwap(known)
	p.limits.Store(&l)
	return p, nil
}

// newCred derives the credential in force from cfg (validated).
func (p *Provider) newCred(cfg Config) *cred {
	cost := password.Cost
	if cfg.UseBcrypt {
		if c, err := password.ParseHash(cfg.Password); err == nil {
			cost = c
		}
	}
	return &cred{
		username:  cfg.Username,
		userSum:   sha256.Sum256([]byte(cfg.Username)),
		password:  cfg.Password,
		useBcrypt: cfg.UseBcrypt,
		cost:      cost,
		match:     password.NewMatcher(cfg.UseBcrypt, p.verifier),
		known:     knownKey(p.secret, cfg.Username, cfg.Password),
	}
}

// Type returns "basic".
func (p *Provider) Type() string { return Name }

// Identify checks r's Basic credentials. A request without any is simply
// not admitted; wrong or malformed ones are logged as refused attempts and
// counted against the client address and the user name (or, from an
// address the name signed in from before, against the two together). A
// blocked address or name gets a *refusal.RetryError before any work is
// spent on it. A credential the verification cache remembers is admitted
// without an attempt slot; any other attempt holds a slot of the address
// and of the name while it is checked, waiting a bounded time for one when
// others hold them all (see package throttle), and only a wrong credential
// is recorded as a failure. An attempt that cannot be checked in time (no
// slot of the name, no room for bcrypt) is answered 429 and takes its
// address's slot: a flood is refused, and paid for by its addresses.
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
	if perr != nil {
		return p.malformed(r, client)
	}
	if u, ok := p.cached(ctx, user, pass); ok {
		return u, true, nil
	}
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
		if u, ok := p.cached(ctx, user, pass); ok {
			return u, true, nil
		}
	}
	return p.attempt(r, client, user, pass)
}

// cached returns the user of a credential verified within the cache's
// lifetime: no bcrypt, no directory.
func (p *Provider) cached(ctx context.Context, user, pass string) (auth.User, bool) {
	if p.dir != nil {
		return p.cachedDirectory(user, pass)
	}
	if c := p.cred.Load(); c.userIs(user) && c.match.Cached(ctx, c.password, []byte(pass)) {
		return auth.User{Name: c.username, Type: Name}, true
	}
	return auth.User{}, false
}

// malformed counts a malformed credential as a failure of client.
func (p *Provider) malformed(r *http.Request, client string) (auth.User, bool, error) {
	v, err := p.limiter.Acquire(r.Context(), client)
	if err != nil {
		return auth.User{}, false, fmt.Errorf("basic: counting the attempt: %w", err)
	}
	if err := passwordauth.Admit(p.audit, r, Name, v, client, ""); err != nil {
		return auth.User{}, false, err
	}
	p.fail(r, p.limiter, v.Slot)
	p.audit.Refused(r, Name, auth.ReasonMalformed, "")
	return auth.User{}, false, nil
}

// attempt checks user and pass as one attempt counted against the client
// address and the name's limit (nameLimit).
func (p *Provider) attempt(r *http.Request, client, user, pass string) (auth.User, bool, error) {
	ctx := r.Context()
	c := p.cred.Load()
	nl := p.nameLimit(r, c, p.throttleName(user), client)
	nv, err := nl.c.Check(ctx, nl.key)
	if err != nil {
		return auth.User{}, false, fmt.Errorf("basic: counting the attempt: %w", err)
	}
	if err := passwordauth.Admit(p.audit, r, Name, nv, nl.label, user); err != nil {
		return auth.User{}, false, err // the name is blocked: no check at all
	}
	v, err := p.limiter.Acquire(ctx, client)
	if err != nil {
		return auth.User{}, false, fmt.Errorf("basic: counting the attempt: %w", err)
	}
	if err := passwordauth.Admit(p.audit, r, Name, v, client, user); err != nil {
		return auth.User{}, false, err
	}
	settled := false
	defer func() {
		if !settled { // no verdict (an error, a panic): the slot goes back
			p.release(r, p.limiter, v.Slot)
		}
	}()
	nv, err = nl.c.Acquire(ctx, nl.key)
	if err != nil {
		return auth.User{}, false, fmt.Errorf("basic: counting the attempt: %w", err)
	}
	if nv.Busy {
		// The name's slots stayed taken by others in flight: this attempt
		// cannot be checked in time. Its address pays a slot for it.
		settled = true
		p.fail(r, p.limiter, v.Slot)
		return auth.User{}, false, &refusal.RetryError{After: nv.RetryAfter}
	}
	if err := passwordauth.Admit(p.audit, r, Name, nv, nl.label, user); err != nil {
		return auth.User{}, false, err
	}
	nameSettled := false
	defer func() {
		if !nameSettled {
			p.release(r, nl.c, nv.Slot)
		}
	}()
	cctx, cancel := context.WithTimeout(ctx, throttle.MaxCheck)
	defer cancel()
	admitted, ok, err := p.verify(cctx, c, user, pass)
	if err != nil {
		if de := (*directory.Error)(nil); errors.As(err, &de) {
			// The directory did not answer: 503, never a verdict, and
			// not held against the client.
			return auth.User{}, false, err
		}
		if ctx.Err() == nil && (errors.Is(err, password.ErrBusy) || errors.Is(err, context.DeadlineExceeded)) {
			// No room for the check in time: answered 429 rather than
			// 503, and the address pays a slot for it (the name does not:
			// nothing is known against it).
			settled = true
			p.fail(r, p.limiter, v.Slot)
			return auth.User{}, false, &refusal.RetryError{After: p.limits.Load().Wait(c.useBcrypt, c.cost)}
		}
		// Not a verdict: the attempt is not held against the client.
		return auth.User{}, false, fmt.Errorf("basic: verifying password: %w", err)
	}
	if !ok {
		settled, nameSettled = true, true
		p.fail(r, p.limiter, v.Slot)
		p.fail(r, nl.c, nv.Slot)
		reason := auth.ReasonBadCredentials
		if c.useBcrypt && len(pass) > password.MaxLen {
			reason = auth.ReasonTooLong
		}
		p.audit.Refused(r, Name, reason, user)
		return auth.User{}, false, nil
	}
	// A success forgets the failures of its own limit only (the name's,
	// or the name's at this known address): the address's count stands,
	// and a flood against the name elsewhere goes on being refused.
	if err := nl.c.Reset(context.WithoutCancel(ctx), nl.key); err != nil {
		p.log.WarnContext(ctx, "auth: forgetting the failures of a good sign-in failed", "auth_type", Name, "err", err)
	}
	p.remember(r, c, p.throttleName(user), client)
	return admitted, true, nil
}

// verify checks user and pass: against the directory (users = ldap),
// else against the configured credential (check). It returns the user
// to admit.
func (p *Provider) verify(ctx context.Context, c *cred, user, pass string) (auth.User, bool, error) {
	if p.dir != nil {
		return p.checkDirectory(ctx, user, pass)
	}
	ok, err := p.check(ctx, c, user, pass)
	return auth.User{Name: c.username, Type: Name}, ok, err
}

// nameLimit is the limit an attempt at user from client counts against:
// the name's, or the name's at this address when the address signed in as
// user within known_address_days. A record that cannot be read counts the
// attempt with everyone's (the strict side) and is logged.
func (p *Provider) nameLimit(r *http.Request, c *cred, user, client string) nameLimit {
	known, err := p.marks.marked(r.Context(), knownID(c.known, user, client))
	if err != nil {
		p.log.WarnContext(r.Context(), "auth: reading the known addresses failed; the attempt counts with every address's", "auth_type", Name, "err", err)
	}
	if known {
		return nameLimit{p.byKnown, user + "\x00" + client, "known address of user " + user}
	}
	return nameLimit{p.byUser, user, "user " + user}
}

// nameLimit is a counter, the key in it, and how logs name the key.
type nameLimit struct {
	c          throttle.Counter
	key, label string
}

// remember records that client signed in as user, for
// known_address_days. Failing to is logged: the address then counts as
// new, the strict side.
func (p *Provider) remember(r *http.Request, c *cred, user, client string) {
	ttl := time.Duration(p.cfg.KnownAddressDays) * 24 * time.Hour
	if err := p.marks.mark(context.WithoutCancel(r.Context()), knownID(c.known, user, client), ttl); err != nil {
		p.log.WarnContext(r.Context(), "auth: recording a known address failed", "auth_type", Name, "err", err)
	}
}

// release gives back the slot of an attempt that succeeded or got no
// verdict. Failing to is logged: the slot then stays taken until its
// lease runs out (a shared store), which errs on the safe side.
func (p *Provider) release(r *http.Request, c throttle.Counter, s throttle.Slot) {
	if err := c.Release(context.WithoutCancel(r.Context()), s); err != nil {
		p.log.WarnContext(r.Context(), "auth: giving back an attempt slot failed", "auth_type", Name, "err", err)
	}
}

// fail records the failure of the attempt holding s of c.
func (p *Provider) fail(r *http.Request, c throttle.Counter, s throttle.Slot) {
	if _, err := c.Fail(context.WithoutCancel(r.Context()), s); err != nil {
		p.log.WarnContext(r.Context(), "auth: recording a failed attempt failed", "auth_type", Name, "err", err)
	}
}

// userIs compares user with the configured name in constant time.
func (c *cred) userIs(user string) bool {
	sum := sha256.Sum256([]byte(user))
	return subtle.ConstantTimeCompare(sum[:], c.userSum[:]) == 1
}

// check compares user and pass with c. The user name is compared in
// constant time, and a wrong one still costs a full bcrypt check against a
// decoy hash, so neither timing nor the cache tells an attacker whether
// the name was right.
func (p *Provider) check(ctx context.Context, c *cred, user, pass string) (bool, error) {
	if !c.userIs(user) {
		return false, c.match.Decoy(ctx, c.cost, []byte(pass))
	}
	return c.match.Match(ctx, c.password, []byte(pass))
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
	p.dcache.purge()
	n, err := p.limiter.Clear(context.Background())
	for _, c := range []throttle.Counter{p.byUser, p.byKnown} {
		if err == nil {
			var m int
			m, err = c.Clear(context.Background())
			n += m
		}
	}
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
