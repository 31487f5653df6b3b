// Package directory signs users in against an LDAP directory (OpenLDAP,
// Active Directory, FreeIPA, Samba AD) over github.com/go-ldap/ldap/v3.
//
// A sign-in searches, as the service account, for the one entry the user
// filter finds for the name given (escaped as RFC 4515 says, so that no
// name can widen the search), binds as that entry with the password given,
// and reads the entry's name, e-mail address and groups. An empty password
// is refused before any bind: many servers take a simple bind with an
// empty password as an anonymous bind that succeeds. Zero entries, several
// entries and a wrong password are one and the same "no".
//
// It fails closed: a directory that cannot be reached, answers slower than
// the timeout, or whose certificate cannot be verified gives an error that
// is Unavailable (refusal.IsUnavailable), never a "yes", and nothing falls
// back to another source of users. Connections are TLS (ldaps:// or
// StartTLS) unless the configuration says insecure, and are verified
// against ca_file or the system's roots; there is no switch that skips
// verification.
//
// Lookup answers the same question without a password, for what admits a
// user without one (machine tokens, passkeys): the entry must still be
// there, alone, and not disabled or locked.
//
// What it does not do: cache anything (the types that use it decide what
// to remember), follow referrals, or write to the directory.
package directory

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-ldap/ldap/v3"
)

// Entry is what a sign-in read of its user.
type Entry struct {
	// Name is the user's name as the directory spells it (the value of
	// the attribute the user filter compares with {username}).
	Name string
	// DN is the user's entry.
	DN string
	// Email is the first value of the e-mail attribute, "" without one.
	Email string
	// Groups are the names of the user's groups, sorted, without repeats.
	Groups []string
	// disabled: the entry's attributes say the account is disabled or
	// locked (Disabled); forGood: disabled by an administrator rather
	// than locked until a time (disabledForGood).
	disabled, forGood bool
}

// Directory signs users in against one directory. It is safe for
// concurrent use; Close it to close its connections.
type Directory struct {
	cfg      Config
	nameAttr string
	tls      *tls.Config
	pool     *pool
}

// New returns a Directory for cfg (defaults applied), refusing what
// Validate refuses. It connects to nothing: connections are made when
// first needed.
func New(cfg Config) (*Directory, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("directory: %w", err)
	}
	u, _ := url.Parse(cfg.URL) // checked by Validate
	tc := &tls.Config{ServerName: u.Hostname(), MinVersion: tls.VersionTLS12}
	if cfg.CAFile != "" {
		roots, err := readCA(cfg.CAFile)
		if err != nil {
			return nil, fmt.Errorf("directory: ca_file: %w", err)
		}
		tc.RootCAs = roots
	}
	d := &Directory{cfg: cfg, nameAttr: cfg.NameAttribute(), tls: tc}
	d.pool = newPool(cfg.URL, cfg.PoolSize, d.dial)
	return d, nil
}

// URL returns the directory's address, for messages.
func (d *Directory) URL() string { return d.cfg.URL }

// Close closes the idle connections; connections in use are closed when
// they come back.
func (d *Directory) Close() error {
	d.pool.close()
	return nil
}

// SignIn checks name and password. ok false with a nil error is "no": an
// empty password or name, no entry or several entries for the name, a
// wrong password, an account the directory refuses to bind (disabled,
// locked, expired). An error means the directory could not answer within
// the timeout, or not verifiably: it is an *Error (Unavailable), and never
// says whether the password was right.
func (d *Directory) SignIn(ctx context.Context, name string, password []byte) (e Entry, ok bool, err error) {
	if name == "" || len(password) == 0 {
		return Entry{}, false, nil // before any bind: an empty password is an anonymous bind
	}
	err = d.withConn(ctx, func(c *ldap.Conn) error {
		var n int
		if e, n, err = d.find(c, name); err != nil || n != 1 || e.forGood {
			return err
		}
		// Bind as the user on the same connection, then as the service
		// account again before the connection is used for anything else.
		bindErr := c.Bind(e.DN, string(password))
		if bindErr != nil && !refusedBind(bindErr) {
			return d.fail("binding as the user", bindErr)
		}
		if err := c.Bind(d.cfg.BindDN, d.cfg.BindPassword); err != nil {
			return d.fail("binding as the service account (bind_dn)", err)
		}
		if bindErr != nil {
			return nil
		}
		e.Groups, err = d.groups(c, e)
		ok = err == nil
		return err
	})
	if !ok {
		return Entry{}, false, err
	}
	return e, true, nil
}

// Lookup asks the directory, as the service account and without any
// password, whether name is still a user who may sign in: exactly one
// entry for the name, not disabled (Disabled), and reads its name, e-mail
// address and groups as SignIn does. It is for what admits a user
// without a password (a machine token, a passkey): ok false with a nil
// error is "no" (no entry, several, disabled); an error is an *Error
// (Unavailable), never a "yes".
func (d *Directory) Lookup(ctx context.Context, name string) (e Entry, ok bool, err error) {
	if name == "" {
		return Entry{}, false, nil
	}
	err = d.withConn(ctx, func(c *ldap.Conn) error {
		var n int
		if e, n, err = d.find(c, name); err != nil || n != 1 || e.disabled {
			return err
		}
		e.Groups, err = d.groups(c, e)
		ok = err == nil
		return err
	})
	if !ok {
		return Entry{}, false, err
	}
	return e, true, nil
}

// Errors of Resolve: the name is not one entry's.
var (
	ErrNoEntry = errors.New("no entry")
	ErrSeveral = errors.New("several entries")
)

// Resolve finds, as the service account, the one entry of name, for an
// administrator's command: the entry (the name as the directory spells
// it, its e-mail address and groups) and whether it is disabled or locked
// (Disabled). A name that is no entry's, or several entries', is an error
// wrapping ErrNoEntry or ErrSeveral that says so; a directory that does
// not answer, an *Error.
func (d *Directory) Resolve(ctx context.Context, name string) (e Entry, disabled bool, err error) {
	err = d.withConn(ctx, func(c *ldap.Conn) error {
		var n int
		e, n, err = d.find(c, name)
		switch {
		case err != nil:
			return err
		case n == 0:
			return fmt.Errorf("%w for the user name %q under %s (user_filter %s)", ErrNoEntry, name, d.cfg.BaseDN, d.cfg.UserFilter)
		case n > 1:
			return fmt.Errorf("%w for the user name %q under %s (user_filter %s): such a name cannot sign in", ErrSeveral, name, d.cfg.BaseDN, d.cfg.UserFilter)
		}
		e.Groups, err = d.groups(c, e)
		return err
	})
	if err != nil {
		return Entry{}, false, err
	}
	return e, e.disabled, nil
}

// Attributes that say an account is disabled or locked, read by Lookup
// (a password sign-in leaves that to the directory's bind).
const (
	// attrUserAccountControl is Active Directory's account flags; the bit
	// uacDisabled is ACCOUNTDISABLE.
	attrUserAccountControl = "userAccountControl"
	uacDisabled            = 0x2
	// attrLockedTime is OpenLDAP's password policy lock (ppolicy,
	// draft-behera): any value locks the account, for good
	// ("000001010000Z") or until the policy's lockout ends.
	attrLockedTime = "pwdAccountLockedTime"
	// attrNsAccountLock is 389 Directory Server's and FreeIPA's lock.
	attrNsAccountLock = "nsAccountLock"
)

// Disabled reports whether the attributes of an entry say its account is
// disabled or locked: Active Directory's userAccountControl with the
// ACCOUNTDISABLE bit (or a value that is not a number), an OpenLDAP
// password policy lock (pwdAccountLockedTime, whatever its value: a lock
// whose end this side cannot know counts until the directory lifts it),
// or nsAccountLock = TRUE.
func Disabled(en *ldap.Entry) bool {
	for _, v := range en.GetEqualFoldAttributeValues(attrUserAccountControl) {
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil || n&uacDisabled != 0 {
			return true
		}
	}
	if len(en.GetEqualFoldAttributeValues(attrLockedTime)) > 0 {
		return true
	}
	for _, v := range en.GetEqualFoldAttributeValues(attrNsAccountLock) {
		if !strings.EqualFold(strings.TrimSpace(v), "false") {
			return true
		}
	}
	return false
}

// disabledForGood reports whether an entry's account was disabled by an
// administrator, not locked until a time: SignIn refuses it before any
// bind, whether or not the directory would bind it. A lock that ends is
// left to the directory's bind, which lifts it when its time is over.
func disabledForGood(en *ldap.Entry) bool {
	if Disabled(ldap.NewEntry(en.DN, map[string][]string{
		attrUserAccountControl: en.GetEqualFoldAttributeValues(attrUserAccountControl),
		attrNsAccountLock:      en.GetEqualFoldAttributeValues(attrNsAccountLock),
	})) {
		return true
	}
	return slices.Contains(en.GetEqualFoldAttributeValues(attrLockedTime), lockedForGood)
}

// lockedForGood is the pwdAccountLockedTime of an account an
// administrator locked (draft-behera-ldap-password-policy).
const lockedForGood = "000001010000Z"

// find searches for the one entry of name: n is how many entries it
// found, 0, 1 or 2 for several (a sign-in takes several as "no", as none
// is: nobody learns which names exist). An entry without one value of
// the name attribute counts as none: there is no name to key the user by.
func (d *Directory) find(c *ldap.Conn, name string) (e Entry, n int, err error) {
	res, err := c.Search(&ldap.SearchRequest{
		BaseDN:       d.cfg.BaseDN,
		Scope:        ldap.ScopeWholeSubtree,
		DerefAliases: ldap.NeverDerefAliases,
		SizeLimit:    2,
		TimeLimit:    d.timeLimit(),
		Filter:       fill(d.cfg.UserFilter, name, ""),
		Attributes:   []string{d.nameAttr, d.cfg.EmailAttribute, attrUserAccountControl, attrLockedTime, attrNsAccountLock},
	})
	switch {
	case ldap.IsErrorWithCode(err, ldap.LDAPResultSizeLimitExceeded):
		return Entry{}, 2, nil // several
	case ldap.IsErrorWithCode(err, ldap.LDAPResultNoSuchObject):
		return Entry{}, 0, d.fail("searching for the user (base_dn does not exist)", err)
	case err != nil:
		return Entry{}, 0, d.fail("searching for the user", err)
	}
	var found []*ldap.Entry
	for _, en := range res.Entries {
		if en.DN != "" {
			found = append(found, en)
		}
	}
	if len(found) != 1 {
		return Entry{}, min(len(found), 2), nil
	}
	en := found[0]
	names := en.GetEqualFoldAttributeValues(d.nameAttr)
	if len(names) != 1 || names[0] == "" {
		return Entry{}, 0, nil // no one name to key the user by
	}
	return Entry{Name: names[0], DN: en.DN, Email: en.GetEqualFoldAttributeValue(d.cfg.EmailAttribute), disabled: Disabled(en), forGood: disabledForGood(en)}, 1, nil
}

// groups reads the names of e's groups.
func (d *Directory) groups(c *ldap.Conn, e Entry) ([]string, error) {
	res, err := c.Search(&ldap.SearchRequest{
		BaseDN:       d.cfg.BaseDN,
		Scope:        ldap.ScopeWholeSubtree,
		DerefAliases: ldap.NeverDerefAliases,
		TimeLimit:    d.timeLimit(),
		Filter:       fill(d.cfg.GroupsFilter, e.Name, e.DN),
		Attributes:   []string{d.cfg.GroupNameAttribute},
	})
	if err != nil {
		return nil, d.fail("searching for the user's groups", err)
	}
	var gs []string
	for _, en := range res.Entries {
		gs = append(gs, en.GetEqualFoldAttributeValues(d.cfg.GroupNameAttribute)...)
	}
	slices.Sort(gs)
	return slices.Compact(gs), nil
}

// Ready reports whether the directory answers: a service-account
// connection is made (or taken) and the base DN read, within the timeout.
func (d *Directory) Ready(ctx context.Context) error {
	return d.withConn(ctx, func(c *ldap.Conn) error {
		_, err := c.Search(&ldap.SearchRequest{
			BaseDN: d.cfg.BaseDN, Scope: ldap.ScopeBaseObject, DerefAliases: ldap.NeverDerefAliases,
			SizeLimit: 1, TimeLimit: d.timeLimit(), Filter: "(objectClass=*)", Attributes: []string{"1.1"},
		})
		if err != nil {
			return d.fail("reading base_dn", err)
		}
		return nil
	})
}

// withConn runs f on a service-account connection from the pool. The
// connection goes back to the pool unless f's error is the directory's
// (an *Error: it failed, timed out or could not be verified), when it is
// closed; an error of the pool itself is returned as it is.
func (d *Directory) withConn(ctx context.Context, f func(c *ldap.Conn) error) error {
	c, err := d.pool.get(ctx)
	if err != nil {
		return err
	}
	err = f(c)
	var de *Error
	d.pool.put(c, !errors.As(err, &de))
	return err
}

// timeLimit is the server-side time limit of a search: the timeout in
// whole seconds, at least one.
func (d *Directory) timeLimit() int { return max(int(d.cfg.Timeout/time.Second), 1) }

// dial connects to the directory, secures the connection and binds as
// the service account, each step within the timeout.
func (d *Directory) dial(ctx context.Context) (*ldap.Conn, error) {
	dctx, cancel := context.WithTimeout(ctx, d.cfg.Timeout)
	defer cancel()
	dialer := &net.Dialer{Timeout: d.cfg.Timeout}
	if deadline, ok := dctx.Deadline(); ok {
		dialer.Deadline = deadline
	}
	c, err := ldap.DialURL(d.cfg.URL, ldap.DialWithDialer(dialer), ldap.DialWithTLSConfig(d.tls))
	if err != nil {
		return nil, d.fail("connecting", err)
	}
	c.SetTimeout(d.cfg.Timeout)
	if d.cfg.StartTLS {
		if err := c.StartTLS(d.tls); err != nil {
			c.Close()
			return nil, d.fail("StartTLS", err)
		}
	}
	if err := c.Bind(d.cfg.BindDN, d.cfg.BindPassword); err != nil {
		c.Close()
		return nil, d.fail("binding as the service account (bind_dn)", err)
	}
	return c, nil
}

// refusedBind reports whether a user's bind failed with a verdict on the
// credentials (wrong password; account disabled, locked or expired; a
// bind the server will not take) rather than a failure to answer.
func refusedBind(err error) bool {
	for _, code := range []uint16{
		ldap.LDAPResultInvalidCredentials,
		ldap.LDAPResultInappropriateAuthentication,
		ldap.LDAPResultUnwillingToPerform,
		ldap.LDAPResultInsufficientAccessRights,
		ldap.LDAPResultConstraintViolation,
		ldap.LDAPResultInvalidDNSyntax,
		ldap.LDAPResultNoSuchObject,
	} {
		if ldap.IsErrorWithCode(err, code) {
			return true
		}
	}
	return false
}

// Error is a directory that did not answer: unreachable, slower than the
// timeout, a certificate that cannot be verified, an answer that is not
// a verdict. It is Unavailable and DirectoryDown (package refusal's
// behaviours): the client is answered 503 with Retry-After.
type Error struct {
	// URL is the directory's address.
	URL string
	// Op is what was being done.
	Op string
	// Why names the kind of failure: "timeout", "tls", "unreachable"
	// or "error".
	Why string
	// Err is the library's error.
	Err error
}

func (e *Error) Error() string {
	return fmt.Sprintf("directory %s: %s: %s: %v", e.URL, e.Op, e.Why, e.Err)
}

// Unwrap returns Err.
func (e *Error) Unwrap() error { return e.Err }

// Unavailable reports true: the client should retry shortly.
func (e *Error) Unavailable() bool { return true }

// DirectoryDown reports true: what does not answer is the directory.
func (e *Error) DirectoryDown() bool { return true }

// fail wraps err as an *Error of op, naming its kind.
func (d *Directory) fail(op string, err error) *Error {
	return &Error{URL: d.cfg.URL, Op: op, Why: kind(err), Err: err}
}

// kind names the kind of a directory failure for logs and /readyz.
func kind(err error) string {
	var cv *tls.CertificateVerificationError
	var ua x509.UnknownAuthorityError
	var ne net.Error
	msg := err.Error()
	switch {
	case errors.As(err, &cv) || errors.As(err, &ua) || strings.Contains(msg, "x509:") || strings.Contains(msg, "tls:") || strings.Contains(msg, "TLS handshake"):
		return "tls"
	case errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout() || strings.Contains(msg, "timed out"):
		return "timeout"
	case errors.As(err, &ne) || strings.Contains(msg, "connection refused") || strings.Contains(msg, "connection closed") || strings.Contains(msg, "connection reset") || strings.Contains(msg, "EOF"):
		return "unreachable"
	case ldap.IsErrorWithCode(err, ldap.LDAPResultInvalidCredentials):
		return "service account refused"
	}
	return "error"
}
