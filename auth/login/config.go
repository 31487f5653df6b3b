package login

import (
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/backupweb/backupweb/auth"
	"github.com/backupweb/backupweb/auth/sessionauth"
	"github.com/backupweb/backupweb/factors"
	"github.com/backupweb/backupweb/internal/ini"
	"github.com/backupweb/backupweb/internal/ui"
	"github.com/backupweb/backupweb/password"
	"github.com/backupweb/backupweb/userfile"
)

// Keys are the [authentication] keys type flask-login reads, besides "type".
var Keys = slices.Concat(
	[]string{"users_file", "use_bcrypt", "login_view", "login_template"},
	sessionauth.SettingsKeys,
	auth.ThrottlingKeys,
	[]string{"max_user_failures", "second_factor", "factors_file", "groups_file", "passkey_login"},
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
	// UsersFile is the path of the user file. Required.
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
	auth.Throttling
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

	// read holds what Load read to check the files it names, so that New
	// does not read them a second time; nil for a Config made in code.
	read *readFiles
}

// readFiles are the user file and login template as Load read them.
type readFiles struct {
	users *reading           // nil when the user file was not read
	tmpl  *template.Template // nil without a template
}

// withDefaults returns cfg with its zero fields set to their defaults.
func (cfg Config) withDefaults() Config {
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	if cfg.LoginPath == "" {
		cfg.LoginPath = DefaultLoginPath
	}
	cfg.Settings = cfg.Settings.WithDefaults()
	def(&cfg.PollInterval, DefaultPollInterval)
	if cfg.FactorsFile == "" && cfg.UsersFile != "" {
		cfg.FactorsFile = factors.DefaultPath(cfg.UsersFile)
	}
	cfg.Throttling = cfg.Throttling.WithDefaults()
	if cfg.MaxUserFailures <= 0 {
		cfg.MaxUserFailures = DefaultMaxUserFailures
	}
	return cfg
}

// Load reads a Config from the [authentication] section and checks
// everything it names: the user file is read and every problem in it is
// recorded with the file's name and line (never a line's content), the
// replacement template is parsed, login_view is checked. Warnings are
// recorded for plain-text passwords, weak or mixed bcrypt costs, a user
// file readable by others and an idle timeout longer than the lifetime. ok
// is false when the configuration cannot be used.
func Load(s *ini.Section) (cfg Config, ok bool) {
	before := errorCount(s.Report())
	cfg = Config{
		UsersFile:       s.String("users_file", ""),
		LoginPath:       s.String("login_view", ""),
		UseBcrypt:       s.Bool("use_bcrypt", false),
		LoginTemplate:   s.String("login_template", ""),
		Settings:        sessionauth.LoadSettings(s),
		Throttling:      auth.LoadThrottling(s),
		MaxUserFailures: s.Int("max_user_failures", DefaultMaxUserFailures, 1, 1_000_000),
		PasskeyLogin:    s.Bool("passkey_login", false),
		FactorsFile:     s.String("factors_file", ""),
	}
	sf, err := ParseSecondFactor(s.String("second_factor", ""))
	if err != nil {
		s.Errorf("second_factor", "%v", err)
	}
	cfg.SecondFactor = sf
	s.Record(cfg.Validate())
	cfg.LoginPath, _ = LoginPath(cfg.LoginPath)
	if cfg.IdleTimeout > cfg.Lifetime {
		s.Warnf("session_idle_timeout", "is longer than session_lifetime, so sessions end after session_lifetime anyway")
	}
	cfg.read = &readFiles{}
	if cfg.LoginTemplate != "" {
		cfg.read.tmpl = checkTemplate(s, cfg.LoginTemplate)
	}
	if cfg.UsersFile != "" {
		cfg.read.users = checkUsersFile(s, cfg)
	}
	if cfg.SecondFactor != SecondFactorOff && cfg.UsersFile != "" {
		checkFactorsFile(s, cfg.withDefaults().FactorsFile)
	}
	return cfg, errorCount(s.Report()) == before
}

// Validate reports what makes c unusable, each problem a *ini.KeyError
// naming its key (errors.Join of them): no user file named, a login_view
// that is not a plain path or takes a route of the program. What the
// files hold is checked by reading them (Load, New). Load records the
// problems at their keys; New returns them.
func (c Config) Validate() error {
	var errs []error
	if c.UsersFile == "" {
		errs = append(errs, &ini.KeyError{Key: "users_file", Err: errors.New("missing required key; set it to the path of the user file (`backupweb user add -file PATH NAME` makes one)")})
	}
	if _, err := LoginPath(c.LoginPath); err != nil {
		errs = append(errs, &ini.KeyError{Key: "login_view", Err: err})
	}
	if c.PasskeyLogin && c.SecondFactor == SecondFactorOff {
		errs = append(errs, &ini.KeyError{Key: "passkey_login", Err: errors.New("needs second_factor = optional or required: passkeys are second factors, kept in the factors file")})
	}
	return errors.Join(errs...)
}

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

// checkTemplate parses the replacement login page and executes it once
// with sample data, so that a mistake shows at start-up rather than at
// every login. A page without the username, password or csrf_token field
// could never sign anyone in: an error. One without next: a warning. It
// returns the template when it can be used.
func checkTemplate(s *ini.Section, path string) *template.Template {
	t, err := ui.ParseLoginTemplate(path)
	if err != nil {
		s.Errorf("login_template", "%v", err)
		return nil
	}
	var b strings.Builder
	sample := ui.LoginPage{Title: pageTitle, Action: DefaultLoginPath, CSRFToken: "token", Next: "/", Error: auth.BadCredentials.Message(), Username: "user"}
	if err := t.Execute(&b, sample); err != nil {
		s.Errorf("login_template", "the template fails with the login page's data: %v", err)
		return nil
	}
	page := b.String()
	for _, f := range formFields {
		if fieldRE(f).MatchString(page) {
			continue
		}
		if f == "next" {
			s.Warnf("login_template", "the page has no form field named next, so every login lands on / instead of the page asked for; add <input type=hidden name=next value=\"{{.Next}}\">")
			continue
		}
		s.Errorf("login_template", "the page has no form field named %s, so it could never sign anyone in; the form must post username, password, csrf_token and next to {{.Action}}", f)
		return nil
	}
	return t
}

// fieldRE matches the name attribute of a form field, quoted or not.
func fieldRE(name string) *regexp.Regexp {
	return regexp.MustCompile(`(?i)\bname\s*=\s*["']?` + regexp.QuoteMeta(name) + `(["'\s/>]|$)`)
}

// checkUsersFile reads the user file as the provider does and records its
// problems and warnings. It returns the reading when the file is good.
func checkUsersFile(s *ini.Section, cfg Config) *reading {
	rd, err := readUsers(cfg.UsersFile, cfg.UseBcrypt)
	if err != nil {
		reportUsersError(s, err)
		return nil
	}
	entries := rd.entries
	holds := "password hashes"
	if !cfg.UseBcrypt {
		holds = "plain-text passwords"
	}
	ini.CheckPrivate(s.Report(), cfg.UsersFile, holds)
	if !cfg.UseBcrypt {
		s.Warnf("use_bcrypt", "is off, so the user file's passwords are %s", password.PlainWarning("`backupweb user passwd`"))
		return &rd
	}
	costs := map[int]int{}
	for _, e := range entries {
		cost, _ := password.ParseHash(e.Hash) // ParseFile checked it
		costs[cost]++
		if w, weak := password.CostWarning(cost, "`backupweb user passwd`"); weak {
			s.Report().Warnf(cfg.UsersFile, e.Line, "", "", "%s", w)
		}
	}
	if len(costs) > 1 {
		s.Report().Warnf(cfg.UsersFile, 0, "", "", "the hashes have different bcrypt costs, so the time a failed login takes can tell some users apart; rehash them with one cost (`backupweb user passwd`)")
	}
	return &rd
}

// reportUsersError records the problems of a user file: each problem the
// userfile package located at a line goes to that file and line; anything
// else (a missing or unreadable file) goes to the users_file key.
func reportUsersError(s *ini.Section, err error) {
	located := false
	for _, e := range flatten(err) {
		var le *userfile.LineError
		if errors.As(e, &le) {
			s.Report().Errorf(le.File, le.Line, "", "", "%v", le.Err)
			located = true
		}
	}
	if !located {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		s.Errorf("users_file", "cannot read the user file %s: %v", ini.ShowPath(s.String("users_file", "")), err)
	}
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

// errorCount returns how many errors rep holds, warnings aside.
func errorCount(rep *ini.Report) int {
	n := 0
	for _, p := range rep.Problems() {
		if p.Severity == ini.Error {
			n++
		}
	}
	return n
}
