package login

import (
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"regexp"
	"strings"
	"time"

	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/auth/passwordauth"
	"github.com/backupweb/backupweb/internal/auth/sessionauth"
	"github.com/backupweb/backupweb/internal/directory"
	"github.com/backupweb/backupweb/internal/factors"
	"github.com/backupweb/backupweb/internal/fspath"
	"github.com/backupweb/backupweb/internal/password"
	"github.com/backupweb/backupweb/internal/refusal"
	"github.com/backupweb/backupweb/internal/tokens"
	"github.com/backupweb/backupweb/internal/ui"
	"github.com/backupweb/backupweb/internal/userfile"
	"github.com/backupweb/backupweb/internal/userstate"
)

// Defaults of the keys.
const (
	DefaultLoginPath       = "/login"
	DefaultMaxUserFailures = 5
	// DefaultPollInterval is how often the user file is checked for
	// changes.
	DefaultPollInterval = 2 * time.Second
)

// reservedPaths are routes of the program that a login page must not take
// over: registering the login page on one of them would shadow it or clash
// with it.
var reservedPaths = []string{"/", "/healthz", sessionauth.LogoutPath}

// reservedPrefixes are route trees of the program (and of type oauth) that
// the login page must stay out of.
var reservedPrefixes = []string{"/api/", "/backups/", "/oauth/", "/_backupweb/"}

// Config is the typed configuration of a flask-login provider.
type Config struct {
	// UsersFrom says where users and their passwords are checked:
	// UsersFromFile (default: UsersFile) or UsersFromDirectory (Directory).
	UsersFrom string
	// Directory is the [ldap] section, with UsersFrom = UsersFromDirectory.
	Directory directory.Config
	// UsersFile is the path of the user file. Required with users from a
	// file; not read with users from the directory.
	UsersFile string
	// UseBcrypt tells whether the user file holds bcrypt hashes. Default
	// false, as Flask-era files assume; plain passwords draw a warning.
	UseBcrypt bool
	// LoginPath is the path of the login page, from login_view. Default
	// DefaultLoginPath.
	LoginPath string
	// LoginTemplate is the path of an html/template file that replaces the
	// built-in login page (see package ui for the data it receives). Empty:
	// the built-in page.
	LoginTemplate string
	// Settings are the session keys every session type shares
	// (session_idle_timeout, idle_renewal, session_lifetime,
	// max_sessions_per_user), with their defaults.
	sessionauth.Settings
	// Throttling is the failure limit by client address (max_failures,
	// failure_window, attempt_wait), with its defaults.
	passwordauth.Throttling
	// MaxUserFailures is how many failed logins one user name may receive,
	// from any address, within FailureWindow before logins for that name
	// are answered 429. Default 5. It slows a distributed guess at one
	// account; the price is that anyone can hold one account's logins off
	// for a window (except from browsers with a device cookie for it, see
	// DeviceCookie).
	MaxUserFailures int
	// SecondFactor says whether a second factor is asked for after the
	// password: SecondFactorOff (default), SecondFactorOptional (from the
	// users who have one) or SecondFactorRequired (from everyone; users
	// without one enrol first).
	SecondFactor SecondFactor
	// FactorsFile is the path of the factors file (package factors).
	// Default: UsersFile + ".factors". Not read when SecondFactor is off.
	FactorsFile string
	// TokensFile is the path of the tokens file (package tokens): the
	// machine tokens accepted as "Authorization: Bearer". Default:
	// UsersFile + ".tokens"; a missing file holds no tokens.
	TokensFile string
	// PollInterval is how often the user file is checked for changes. It
	// is not read from the configuration. Default DefaultPollInterval; a
	// negative value turns polling off (Reload, on SIGHUP, still works).
	PollInterval time.Duration
	// PasskeyLogin offers "Sign in with a passkey" on the login page: a
	// discoverable passkey alone, with user verification, signs its user
	// in, without the password. [authentication] passkey_login, default
	// false. Needs second_factor = optional or required (passkeys are
	// second factors, kept in the factors file) and [server] public_url
	// (auth.Deps.PublicURL).
	PasskeyLogin bool

	// read holds what ReadUsers and ReadTemplate read, so that New
	// does not read them a second time; nil for a Config made in code.
	read *readFiles
	// maxSpent, when above zero, is MaxSpent for this provider (tests
	// fill a small table).
	maxSpent int
	// wrapState, when not nil, wraps the users' state store the provider
	// opens (tests that count what is read).
	wrapState func(userstate.Store) userstate.Store
}

// readFiles are the user file and login template as ReadUsers and
// ReadTemplate read them.
type readFiles struct {
	users *reading           // nil when the user file was not read
	tmpl  *template.Template // nil without a template
}

// WithDefaults returns cfg with its zero fields set to their defaults:
// the one place the defaults of type flask-login are applied (New and the
// configuration's loader both call it).
func (cfg Config) WithDefaults() Config {
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	if cfg.LoginPath == "" {
		cfg.LoginPath = DefaultLoginPath
	}
	if cfg.UsersFrom == "" {
		cfg.UsersFrom = UsersFromFile
	}
	if cfg.UsersFrom == UsersFromDirectory {
		cfg.Directory = cfg.Directory.WithDefaults()
	}
	cfg.Settings = cfg.Settings.WithDefaults()
	def(&cfg.PollInterval, DefaultPollInterval)
	if cfg.FactorsFile == "" && cfg.UsersFile != "" {
		cfg.FactorsFile = factors.DefaultPath(cfg.UsersFile)
	}
	if cfg.TokensFile == "" && cfg.UsersFile != "" {
		cfg.TokensFile = tokens.DefaultPath(cfg.UsersFile)
	}
	cfg.Throttling = cfg.Throttling.WithDefaults()
	if cfg.MaxUserFailures <= 0 {
		cfg.MaxUserFailures = DefaultMaxUserFailures
	}
	return cfg
}

// Validate reports what makes c unusable, each problem a *auth.KeyError
// naming its key (errors.Join of them): no user file named, a login_view
// that is not a plain path or takes a route of the program. What the
// files hold is checked by reading them (ReadTemplate, ReadUsers,
// ReadFactors, New). The program's loader records the problems at their
// keys; New returns them.
func (c Config) Validate() error {
	var errs []error
	switch c.UsersFrom {
	case "", UsersFromFile:
		if c.UsersFile == "" {
			errs = append(errs, &auth.KeyError{Key: "users_file", Err: errors.New("missing required key; set it to the path of the user file (`backupweb user add -file PATH NAME` makes one)")})
		}
	case UsersFromDirectory:
		errs = append(errs, c.validateDirectory()...)
	default:
		errs = append(errs, &auth.KeyError{Key: "users", Err: fmt.Errorf("unknown value %q; valid values are %s and %s", c.UsersFrom, UsersFromFile, UsersFromDirectory)})
	}
	if _, err := LoginPath(c.LoginPath); err != nil {
		errs = append(errs, &auth.KeyError{Key: "login_view", Err: err})
	}
	if c.PasskeyLogin && c.SecondFactor == SecondFactorOff {
		errs = append(errs, &auth.KeyError{Key: "passkey_login", Err: errors.New("needs second_factor = optional or required: passkeys are second factors, kept in the factors file")})
	}
	return errors.Join(errs...)
}

// validateDirectory reports the keys of [authentication] that cannot go
// with users = ldap. The [ldap] keys themselves are the directory's
// (directory.Config.Validate), recorded at their own section.
func (c Config) validateDirectory() []error {
	var errs []error
	if c.UsersFile != "" {
		errs = append(errs, &auth.KeyError{Key: "users_file", Err: errors.New("is not read with users = ldap: users and passwords are the directory's; remove one of the two")})
	}
	if c.FactorsFile == "" && c.SecondFactor != SecondFactorOff {
		errs = append(errs, &auth.KeyError{Key: "factors_file", Err: errors.New("missing: with users = ldap it has no place beside a user file; set it, or set [server] state_dir")})
	}
	return errs
}

// hasUsers reports whether users are configured at all: a user file, or
// the directory.
func (c Config) hasUsers() bool { return c.UsersFile != "" || c.UsersFrom == UsersFromDirectory }

// LoginPath turns a login_view value into the login page's path: a value
// starting with "/" is the path itself, a bare view name such as "login"
// (as Flask-era files have) means "/login", and an empty value means
// DefaultLoginPath. The path must be plain (letters, digits and -._~/),
// must not end with "/" and must not take a route of the program.
func LoginPath(view string) (string, error) {
	view = strings.TrimSpace(view)
	if view == "" {
		return DefaultLoginPath, nil
	}
	path := view
	if !strings.HasPrefix(path, "/") {
		path = "/" + path
	}
	for _, r := range path {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-._~/", r)) {
			return DefaultLoginPath, errors.New("must be a view name or a path made of letters, digits and -._~/ (such as login or /login)")
		}
	}
	for seg := range strings.SplitSeq(path[1:], "/") {
		if seg == "" || seg == "." || seg == ".." {
			return DefaultLoginPath, errors.New(`must be a plain path: no empty, "." or ".." segments and no trailing "/"`)
		}
	}
	for _, p := range reservedPaths {
		if path == p {
			return DefaultLoginPath, fmt.Errorf("%s is a route of the program; choose another path such as /login", p)
		}
	}
	for _, p := range reservedPrefixes {
		if strings.HasPrefix(path+"/", p) {
			return DefaultLoginPath, fmt.Errorf("paths under %s are routes of the program; choose another path such as /login", p)
		}
	}
	return path, nil
}

// formFields are the fields a login page must post.
var formFields = []string{"username", "password", "csrf_token", "next"}

// ReadTemplate parses the replacement login page (LoginTemplate, when
// set) and executes it once with sample data, so that a mistake shows at
// start-up rather than at every login, and keeps it for New. A page
// without the username, password or csrf_token field could never sign
// anyone in: an error. One without next: a warning (*auth.Warning). Each
// problem is a *auth.KeyError at login_template.
func (c *Config) ReadTemplate() (problems []error) {
	if c.LoginTemplate == "" {
		return nil
	}
	bad := func(err error) *auth.KeyError { return &auth.KeyError{Key: "login_template", Err: err} }
	t, err := ui.ParseLoginTemplate(c.LoginTemplate)
	if err != nil {
		return []error{bad(err)}
	}
	var b strings.Builder
	sample := ui.LoginPage{Title: pageTitle, Action: DefaultLoginPath, CSRFToken: "token", Next: "/", Error: refusal.BadCredentials.Message(), Username: "user"}
	if err := t.Execute(&b, sample); err != nil {
		return []error{bad(fmt.Errorf("the template fails with the login page's data: %v", err))}
	}
	page := b.String()
	for _, f := range formFields {
		if fieldRE(f).MatchString(page) {
			continue
		}
		if f == "next" {
			problems = []error{&auth.Warning{Err: bad(errors.New("the page has no form field named next, so every login lands on / instead of the page asked for; add <input type=hidden name=next value=\"{{.Next}}\">"))}}
			continue
		}
		return []error{bad(fmt.Errorf("the page has no form field named %s, so it could never sign anyone in; the form must post username, password, csrf_token and next to {{.Action}}", f))}
	}
	c.keep().tmpl = t
	return problems
}

// keep returns where what was read is kept for New.
func (c *Config) keep() *readFiles {
	if c.read == nil {
		c.read = &readFiles{}
	}
	return c.read
}

// fieldRE matches the name attribute of a form field, quoted or not.
func fieldRE(name string) *regexp.Regexp {
	return regexp.MustCompile(`(?i)\bname\s*=\s*["']?` + regexp.QuoteMeta(name) + `(["'\s/>]|$)`)
}

// ReadUsers reads the user file as New does and keeps it for New; read
// tells whether it can be used. Otherwise the problems say why: each
// problem of a line as the *userfile.LineError at that line (never the
// line's content), or, when none is located, one *auth.KeyError at users_file
// (missing, unreadable). When it can, the problems are warnings
// (*auth.Warning): plain passwords (at use_bcrypt), weak bcrypt costs (at
// the hash's line) and mixed costs (about the whole file). Whether the
// file is private to its owner is the caller's to check.
func (c *Config) ReadUsers() (read bool, problems []error) {
	rd, err := readUsers(c.UsersFile, c.UseBcrypt)
	if err != nil {
		return false, usersErrors(c.UsersFile, err)
	}
	c.keep().users = &rd
	if !c.UseBcrypt {
		return true, []error{&auth.Warning{Err: &auth.KeyError{Key: "use_bcrypt", Err: fmt.Errorf("is off, so the user file's passwords are %s", password.PlainWarning("`backupweb user passwd`"))}}}
	}
	costs := map[int]int{}
	for _, e := range rd.entries {
		cost, _ := password.ParseHash(e.Hash) // ParseFile checked it
		costs[cost]++
		if w, weak := password.CostWarning(cost, "`backupweb user passwd`"); weak {
			problems = append(problems, &auth.Warning{Err: &auth.FileError{File: c.UsersFile, Line: e.Line, Err: errors.New(w)}})
		}
	}
	if len(costs) > 1 {
		problems = append(problems, &auth.Warning{Err: &auth.FileError{File: c.UsersFile, Err: errors.New("the hashes have different bcrypt costs, so the time a failed login takes can tell some users apart; rehash them with one cost (`backupweb user passwd`)")}})
	}
	return true, problems
}

// usersErrors turns the error of reading the user file at path into the
// problems ReadUsers returns: each problem the userfile package located at
// a line goes to that file and line; anything else (a missing or
// unreadable file) goes to the users_file key.
func usersErrors(path string, err error) []error {
	var out []error
	for _, e := range flatten(err) {
		if le, ok := errors.AsType[*userfile.LineError](e); ok {
			out = append(out, le) // placed at its file and line as it is
		}
	}
	if out != nil {
		return out
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return []error{&auth.KeyError{Key: "users_file", Err: fmt.Errorf("cannot read the user file %s: %v", fspath.Show(path), err)}}
}

// flatten returns the errors joined in err (errors.Join, however deeply
// wrapped), or err alone.
func flatten(err error) []error {
	var j interface{ Unwrap() []error }
	if errors.As(err, &j) {
		return j.Unwrap()
	}
	return []error{err}
}
