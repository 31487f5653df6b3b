// Package login is authentication type flask-login: a login page, users
// and their password hashes from a user file, and server-side sessions.
//
// A browser that is not signed in is sent to the login page (login_view,
// default /login) with ?next= set to where it was going; API clients get
// 401. The page's form carries a CSRF token bound to a cookie (package
// session), and a good user name and password start a session with a
// fresh id, then a 303 to next when it is a local path. POST /logout ends
// the session on the server. Sessions, their cookies, idle and absolute
// expiry and CSRF tokens are package session's; identifying a request by
// its session, the redirect and logout are package sessionauth's, shared
// with type oauth.
//
// Guessing is made slow and unrewarding: failed logins are counted per
// client address and per user name (429 with Retry-After past the limits;
// a browser that signed in before counts per device instead of per name,
// see DeviceCookie), each attempt holding a slot of both only while it is
// checked (package throttle), so right logins arriving together are never
// refused for it and a success resets its own name's count only,
// every wrong password and every unknown user name costs the same bcrypt
// work (unknown names are checked against a decoy hash of the usual cost),
// bcrypt work is capped by a gate, both cases get one and the same answer,
// and every refused login is logged with its reason, address and user
// name, never the password.
//
// The user file is read again when it changes (its stat is polled every
// couple of seconds) and on SIGHUP (Reload). A file with problems changes
// nothing: the last good users stay and the problems are logged. Sessions
// of users removed from the file, or whose password changed, end.
//
// With second_factor = optional or required, a right password for a user
// with a second factor (any user, with required) is not yet a sign-in: it
// is handed to package secondfactor, whose pending state grants nothing
// and leads to the second-factor step (a TOTP or recovery code or a
// passkey, counted against the provider's limits as passwords are) or,
// for a user who must enrol, to the enrolment; the factors live in the
// factors file (package factors) or the shared store. The provider opens
// that store, the single-use table and the passkey service, and keeps
// checking each session against the user's factors. See
// docs/second-factor.md.
//
// What it does not do: edit the user file (the `user` command does), lock
// accounts permanently, or remember anything but the user name and the
// second factor used in a session.
package login

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"html/template"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/auth/passwordauth"
	"github.com/backupweb/backupweb/internal/auth/secondfactor"
	"github.com/backupweb/backupweb/internal/auth/sessionauth"
	"github.com/backupweb/backupweb/internal/directory"
	"github.com/backupweb/backupweb/internal/factors"
	"github.com/backupweb/backupweb/internal/filewatch"
	"github.com/backupweb/backupweb/internal/passkey"
	"github.com/backupweb/backupweb/internal/password"
	"github.com/backupweb/backupweb/internal/refusal"
	"github.com/backupweb/backupweb/internal/secretkey"
	"github.com/backupweb/backupweb/internal/session"
	"github.com/backupweb/backupweb/internal/throttle"
	"github.com/backupweb/backupweb/internal/ui"
	"github.com/backupweb/backupweb/internal/userstate"
)

// Name is the type's name in configuration.
const Name = "flask-login"

// maxUserBlock caps how long repeated failures can hold one user name off.
// Blocks of an address double up to a day (package throttle's default);
// those of a name stop at an hour, because anyone can make a name fail, and
// a block of the name also holds off its rightful user.
const maxUserBlock = time.Hour

// Provider is the flask-login authentication type. It is safe for
// concurrent use. Close it to stop watching the user file and to write the
// session store's pending changes.
type Provider struct {
	// Guard identifies requests by session, challenges, serves logout,
	// and owns the sessions (readiness, closing).
	*sessionauth.Guard

	cfg      Config
	noTokens bool // machine tokens are ignored (auth.Deps.NoMachineTokens)
	verifier *password.Verifier
	match    password.Matcher // bcrypt or plain, chosen at load by use_bcrypt
	// dir is the directory users sign in against (users = ldap); nil with
	// a user file.
	dir      *directory.Directory
	dchecks  *directoryChecks // the directory's recent answers (users = ldap)
	byAddr   *throttle.Swap   // failures per client address
	byUser   *throttle.Swap   // failures per user name, from any address
	byDevice *throttle.Swap   // failures per device cookie, instead of byUser
	// counters makes the three counters for a reload's limits
	// (SetThrottling); limits are those in force.
	counters func(t passwordauth.Throttling, maxUser int, wait time.Duration) (addr, user, device throttle.Counter)
	limits   atomic.Pointer[limits]
	// deviceKey signs device cookies; now is the clock they expire by.
	deviceKey []byte
	// devicePrevKey, during a secret key rotation, checks the device
	// cookies signed before it; nil otherwise.
	devicePrevKey []byte
	now           func() time.Time
	tmpl          *template.Template // nil: the built-in page
	log           *slog.Logger
	audit         auth.Audit // refusals and sign-ins logged and counted
	errs          *refusal.Errors

	users atomic.Pointer[userSet]
	// sf is the second_factor in force: cfg.SecondFactor at the start,
	// then what SetSecondFactor set (a reload).
	sf atomic.Int32

	// state keeps the users' second factors and machine tokens: the
	// shared store's when there is one (every instance sees the same),
	// else files, which files names (nil with a shared store).
	state userstate.Store
	files *userstate.FileStore

	// passkeys runs the passkey ceremonies; nil when second_factor is
	// off.
	passkeys *passkey.Service
	// fkeys seal TOTP secrets and hash recovery codes, nil when
	// second_factor is off; spend marks a token used once (the shared
	// store's, or this process's), spent tells whether one is.
	fkeys *factors.Keys
	spend func(ctx context.Context, kind, token string, ttl time.Duration) (bool, error)
	spent func(ctx context.Context, kind, token string) (bool, error)
	// step is the second factor's step, enrolment, passkeys and
	// password page (package secondfactor).
	step *secondfactor.Step

	reloadMu sync.Mutex // serialises reloads; guards last and broken
	broken   bool       // the last reading of the user file had problems
	last     struct {
		stamp  filewatch.Stamp
		racy   bool
		digest [32]byte
	}
	onPoll func() // test hook: runs after a poll has reloaded

	closeOnce sync.Once
	closeErr  error
}

var (
	_ auth.Provider = (*Provider)(nil)
	_ auth.Mounter  = (*Provider)(nil)
	_ auth.Reloader = (*Provider)(nil)
	_ io.Closer     = (*Provider)(nil)
	_ auth.Checker  = (*Provider)(nil)
	_ auth.Watcher  = (*Provider)(nil)
)

// New returns a provider for cfg (zero fields take their defaults). It reads the user file, parses the replacement template if
// any, and opens the session store in deps.StateDir (or uses deps.Shared's);
// the program runs Watch to follow changes of the user file. deps.SecretKey
// is required. To validate a configuration without building anything, use
// Validate and the Read methods.
func New(cfg Config, deps auth.Deps) (*Provider, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("login: %w", err)
	}
	cfg.LoginPath, _ = LoginPath(cfg.LoginPath)
	// What ReadUsers and ReadTemplate read is not read again.
	var rd reading
	var err error
	var dir *directory.Directory
	switch {
	case cfg.UsersFrom == UsersFromDirectory:
		if dir, err = directory.New(cfg.Directory); err != nil {
			return nil, fmt.Errorf("login: [ldap]: %w", err)
		}
		rd = reading{set: directoryUsers()}
	case cfg.read != nil && cfg.read.users != nil:
		rd = *cfg.read.users
	default:
		if rd, err = readUsers(cfg.UsersFile, cfg.UseBcrypt); err != nil {
			return nil, err
		}
	}
	count, err := passwordauth.Counters(deps)
	if err != nil {
		return nil, fmt.Errorf("login: %w", err)
	}
	wait := cfg.Wait(cfg.UseBcrypt, rd.set.decoyCost)
	p := &Provider{
		cfg:      cfg,
		dir:      dir,
		dchecks:  newDirectoryChecks(deps.Clock()),
		noTokens: deps.NoMachineTokens,
		// Successes are not cached: a login is checked once per session,
		// and every check then costs the same.
		verifier: password.NewVerifier(password.VerifierOptions{CacheSize: -1, Now: deps.Clock(), Observer: deps.Hooks.Password}),
		log:      deps.Log(),
		audit:    deps.Audit(),
		errs:     deps.Errs(),
		now:      deps.Clock(),
	}
	p.match = password.NewMatcher(cfg.UseBcrypt, p.verifier)
	p.counters = func(t passwordauth.Throttling, maxUser int, wait time.Duration) (addr, user, device throttle.Counter) {
		return newCounters(deps, count, t, maxUser, wait)
	}
	addr, user, device := p.counters(cfg.Throttling, cfg.MaxUserFailures, wait)
	p.byAddr, p.byUser, p.byDevice = throttle.NewSwap(addr), throttle.NewSwap(user), throttle.NewSwap(device)
	p.limits.Store(&limits{cfg.Throttling, cfg.MaxUserFailures})
	p.sf.Store(int32(cfg.SecondFactor))
	p.last.stamp, p.last.racy, p.last.digest = rd.stamp, rd.racy, rd.digest
	switch {
	case cfg.LoginTemplate == "":
	case cfg.read != nil && cfg.read.tmpl != nil:
		p.tmpl = cfg.read.tmpl
	default:
		if p.tmpl, err = ui.ParseLoginTemplate(cfg.LoginTemplate); err != nil {
			return nil, fmt.Errorf("login: login template: %w", err)
		}
	}
	p.Guard, err = sessionauth.Open(deps, sessionauth.Options{
		Type:      Name,
		LoginPath: cfg.LoginPath,
		Settings:  cfg.Settings,
		// A session is good while its user's line in the user file is the
		// one it was made with, whatever happened in between (a password
		// changed while the service was stopped included).
		// With a second factor, the session must also stand with the
		// factors file as it is now (see factorAdmits).
		Admit:   func(d session.Data) bool { return p.users.Load().admits(d.Username, d.Cred) && p.factorAdmits(d) },
		Refusal: p.refusal,
	})
	if err != nil {
		return nil, fmt.Errorf("login: %w", err)
	}
	if p.deviceKey, err = p.Manager().PurposeKey("device-cookie"); err != nil {
		return nil, fmt.Errorf("login: %w", err)
	}
	if p.devicePrevKey, _, err = p.Manager().PreviousPurposeKey("device-cookie"); err != nil {
		return nil, fmt.Errorf("login: %w", err)
	}
	p.users.Store(rd.set.bind(p.Manager().Fingerprint, p.Manager().PreviousFingerprint))
	if deps.Shared == nil && p.Manager().HasPrevious() {
		p.resealOwnSessions()
	}
	p.SetAccountExtra(p.fillAccount)
	// The second factor's parts are made whatever second_factor says, so
	// that a reload can turn it on (or off) in a running service: with
	// off they are there and unused, and its routes answer 404.
	if p.fkeys, err = factors.NewKeyring(secretkey.Keys{Current: deps.SecretKey, Previous: deps.PreviousSecretKey}); err != nil {
		return nil, fmt.Errorf("login: %w", err)
	}
	if err := p.openState(cfg, deps); err != nil {
		p.Guard.Close()
		return nil, fmt.Errorf("login: %w", err)
	}
	if p.spend, p.spent, err = openSpent(deps, cmp.Or(cfg.maxSpent, MaxSpent)); err != nil {
		p.Guard.Close()
		return nil, fmt.Errorf("login: %w", err)
	}
	// Passkeys are bound to the origin users reach the service at:
	// without [server] public_url they are not offered, and TOTP and
	// recovery codes are the second factors. Nor are they with second
	// factors off when that origin's host is an IP address, which cannot
	// be a relying-party id (public_url defaults to the origin of a
	// certificate for a LAN address, https://192.168.1.20): the service
	// starts without them, where with second factors on the configuration
	// check has refused that address already.
	if deps.PublicURL != nil {
		var host *passkey.RPIDError
		p.passkeys, err = p.openPasskeys(deps)
		switch {
		case errors.As(err, &host) && cfg.SecondFactor == SecondFactorOff:
			p.passkeys = nil
		case err != nil:
			p.Guard.Close()
			return nil, fmt.Errorf("login: %w", err)
		}
	}
	if cfg.PasskeyLogin && p.passkeys == nil {
		return nil, errors.New("login: passkey_login needs second_factor = optional or required and [server] public_url")
	}
	if p.step, err = p.openStep(); err != nil {
		return nil, fmt.Errorf("login: %w", err)
	}
	if cfg.UseBcrypt {
		password.DecoyHash(rd.set.decoyCost) // keep its one-off cost out of request time
	}
	return p, nil
}

// Type returns "flask-login".
func (p *Provider) Type() string { return Name }

// Mount adds the login page (GET and POST at the login path), /logout (GET
// the confirmation page, POST the sign-out), the second factor's routes
// (secondfactor.Step.Mount: the step, the enrolment, the password page
// and the passkeys), the account page (where, as on the passkeys pages,
// a machine token that is not valid gets the 401 it gets on
// every protected route, see bearerGate)
// and, unless mux has them already, the stylesheet and icon the page uses
// (ui.Mount), so that the page is styled in a host application too.
func (p *Provider) Mount(mux *http.ServeMux) {
	ui.Mount(mux)
	mux.HandleFunc("GET "+p.cfg.LoginPath, p.serveForm)
	mux.HandleFunc("POST "+p.cfg.LoginPath, p.serveLogin)
	mux.HandleFunc("GET "+sessionauth.LogoutPath, p.LogoutPage)
	mux.HandleFunc("POST "+sessionauth.LogoutPath, p.Logout)
	p.step.Mount(mux, p.signedInRoutes)
	p.mountAccount(bearerGate{mux, p})
}

// Ready reports whether logins can be answered: the user file was loaded
// and the session store answers. A user file whose last edit is broken is
// still ready: its unchanged users are served.
func (p *Provider) Ready(ctx context.Context) error {
	if p.users.Load() == nil {
		return &auth.NotReady{Part: "the user file is not loaded"}
	}
	if p.dir != nil {
		if err := p.directoryReady(ctx); err != nil {
			return err
		}
	}
	return p.Guard.Ready(ctx)
}

// OwnPaths returns the paths the provider serves: the login page and
// logout, and the second factor's step and enrolment (404 while
// second_factor is off, which a reload may change).
func (p *Provider) OwnPaths() []string {
	return []string{p.cfg.LoginPath, sessionauth.LogoutPath, secondfactor.SecondFactorPath, secondfactor.EnrolPath}
}

// Close closes the session store, which writes its pending activity
// refreshes. Later calls do nothing.
func (p *Provider) Close() error {
	p.closeOnce.Do(func() {
		if p.dir != nil {
			p.dir.Close()
		}
		if err := p.Guard.Close(); err != nil {
			p.closeErr = fmt.Errorf("login: %w", err)
		}
	})
	return p.closeErr
}

// resealOwnSessions puts the sessions of this instance's own store (the
// file store in state_dir, which no other instance reads) under the
// current secret key at start, their credential fingerprints included,
// so that they hold once BACKUP_SECRET_KEY_PREVIOUS is dropped. Run again
// at every start with a previous key: it finds them current.
func (p *Provider) resealOwnSessions() {
	n, err := p.Manager().Reseal(context.Background(), p.users.Load().credential)
	if err != nil {
		p.log.Warn("auth: resealing the sessions under the new secret key failed; they stay under BACKUP_SECRET_KEY_PREVIOUS", "auth_type", Name, "err", err)
		return
	}
	if n.Resealed > 0 {
		p.log.Info("auth: sessions resealed under the new secret key", "auth_type", Name, "resealed", n.Resealed, "current", n.Current, "refused", n.Refused)
	}
}
