package app

import (
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"

	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/auth/basic"
	"github.com/backupweb/backupweb/internal/auth/login"
	"github.com/backupweb/backupweb/internal/auth/none"
	"github.com/backupweb/backupweb/internal/auth/oauth"
	"github.com/backupweb/backupweb/internal/ini"
)

// Section is the name of the configuration section that selects and
// configures authentication.
const Section = "authentication"

// MinSecretLen is the shortest BACKUP_SECRET_KEY accepted.
const MinSecretLen = 32

// SecretEnv is the environment variable that holds the secret key.
const SecretEnv = "BACKUP_SECRET_KEY"

// Type describes one authentication type: its names, its keys, and what
// the program must do for it, as data rather than comparisons of names.
type Type struct {
	// Name is the value of the type key.
	Name string
	// Aliases are other accepted spellings of Name.
	Aliases []string
	// Summary says in a few words what the type does.
	Summary string
	// Keys declare the [authentication] keys the type reads, besides
	// "type", each with what it holds.
	Keys []Key
	// NeedsSecret tells whether the type keeps sessions and so needs
	// BACKUP_SECRET_KEY.
	NeedsSecret bool
	// AuthOff tells that the type admits everyone: authentication is off,
	// which the program warns about.
	AuthOff bool
	// SharedState tells that the type keeps state several instances must
	// agree on (sessions, failure counts, used states): with [server]
	// store = redis it is given the shared store.
	SharedState bool
	// SecondFactor tells that the type can ask for a second factor: only
	// its [access] second_factor rules can admit anyone, and its passkeys
	// need [server] public_url.
	SecondFactor bool
	// ProviderGroups tells that the users' groups come from the identity
	// provider rather than from groups_file.
	ProviderGroups bool
	// ClientLabel is the key whose value (lower-cased) labels the metrics
	// of the type's outgoing HTTP client; "" when the type makes no
	// outgoing requests.
	ClientLabel string
	// build reads the type's keys from s and returns its provider, or nil
	// after recording why not in s's report. secretOK is false when the type
	// needs BACKUP_SECRET_KEY and it is missing or too short: the keys are
	// still checked, so every problem is reported, but nothing is built.
	build func(s *ini.Section, ldap *ini.Section, deps auth.Deps, secretOK bool) auth.Provider
	// check reads and validates the section as build does, and builds
	// nothing: what check-config runs. It returns the type's typed
	// configuration (nil for none), from which App reads the files it
	// names (fileNamer) and the users it names (userNamer).
	check func(s *ini.Section, env *loadEnv) (cfg any, ok bool)
}

// types is the table of authentication types, in the order documentation
// lists them.
var types = []Type{
	{
		Name:    none.Name,
		Summary: "no authentication (default; not for production)",
		AuthOff: true,
		build:   func(*ini.Section, *ini.Section, auth.Deps, bool) auth.Provider { return none.Provider{} },
		check:   func(*ini.Section, *loadEnv) (any, bool) { return nil, true },
	},
	{
		Name:        basic.Name,
		Summary:     "HTTP Basic authentication with one user",
		Keys:        basicKeys,
		SharedState: true,
		build:       builder(loadBasic, basic.New),
		check:       loader(loadBasic),
	},
	{
		Name:         login.Name,
		Aliases:      []string{"login"},
		Summary:      "session login with a login page and users from a user file",
		Keys:         loginKeys,
		NeedsSecret:  true,
		SharedState:  true,
		SecondFactor: true,
		build:        builder(loadLogin, login.New),
		check:        loader(loadLogin),
	},
	{
		Name:           oauth.Name,
		Summary:        "sign-in through an OAuth 2.0 / OpenID Connect identity provider (google, github, gitlab, generic)",
		Keys:           oauthKeys,
		NeedsSecret:    true,
		SharedState:    true,
		ProviderGroups: true,
		ClientLabel:    "provider",
		build:          builder(plain(loadOAuth), oauth.New),
		check:          loader(plain(loadOAuth)),
	},
}

// builder joins a type's loader (read and validate its keys, recording
// problems) and New (build the provider) into a Type's build function. New
// is not called when the loader found errors, or when the type needs the
// secret key and it is missing (NewProvider has recorded why).
func builder[C any, P auth.Provider](load loadFunc[C], create func(C, auth.Deps) (P, error)) func(*ini.Section, *ini.Section, auth.Deps, bool) auth.Provider {
	return func(s, ldap *ini.Section, deps auth.Deps, secretOK bool) auth.Provider {
		cfg, ok := load(s, &loadEnv{stateDir: deps.StateDir, log: deps.Log(), ldap: ldap})
		if !ok || !secretOK {
			return nil
		}
		p, err := create(cfg, deps)
		if err != nil {
			s.Errorf("", "%v", err)
			return nil
		}
		return p
	}
}

// fileNamer is implemented by the configurations of the types that use
// files besides groups_file: the files, by the key that names each, with
// the type's defaults applied (login.Config.Files).
type fileNamer interface{ Files() map[string]string }

// userNamer is implemented by the configurations that name their users
// themselves rather than in a file (basic.Config.Users: its one user).
type userNamer interface{ Users() []string }

// loadEnv is what a type's loader knows besides its section.
type loadEnv struct {
	// stateDir is [server] state_dir: the default folder of the files the
	// type writes.
	stateDir string
	// log is set when the provider is built (Open, the root package): the
	// loader may then move a file from its old default place into
	// stateDir, and logs it. Nil for Check, which changes nothing.
	log *slog.Logger
	// state is set by the loader of type flask-login: where it keeps what
	// it writes about its users.
	state *StateFiles
	// ldap is the [ldap] section, read with users = ldap; nil (or absent)
	// when the configuration has none (a provider made in code).
	ldap *ini.Section
}

// loadFunc reads a type's keys from its section into its configuration,
// recording every problem in the section's report; ok is false when the
// configuration cannot be used.
type loadFunc[C any] func(s *ini.Section, env *loadEnv) (cfg C, ok bool)

// plain makes a loadFunc of a loader that needs nothing but its section.
func plain[C any](load func(*ini.Section) (C, bool)) loadFunc[C] {
	return func(s *ini.Section, _ *loadEnv) (C, bool) { return load(s) }
}

// loader turns a type's loader into Type.check.
func loader[C any](load loadFunc[C]) func(*ini.Section, *loadEnv) (any, bool) {
	return func(s *ini.Section, env *loadEnv) (any, bool) {
		cfg, ok := load(s, env)
		return cfg, ok
	}
}

// Types returns the table of authentication types.
func Types() []Type { return slices.Clone(types) }

// Names returns the names of the types, for messages.
func Names() []string {
	names := make([]string, len(types))
	for i, t := range types {
		names[i] = t.Name
	}
	return names
}

// Lookup finds a type by name or alias, case-insensitively.
func Lookup(name string) (Type, bool) {
	for _, t := range types {
		if strings.EqualFold(t.Name, name) || slices.ContainsFunc(t.Aliases, func(a string) bool { return strings.EqualFold(a, name) }) {
			return t, true
		}
	}
	return Type{}, false
}

// Reads tells whether the type reads the key named.
func (t Type) Reads(name string) bool {
	_, ok := t.Key(name)
	return ok
}

// Key returns the type's declaration of the key named.
func (t Type) Key(name string) (Key, bool) {
	i := slices.IndexFunc(t.Keys, func(k Key) bool { return k.Name == name })
	if i < 0 {
		return Key{}, false
	}
	return t.Keys[i], true
}

// Live returns the keys of the type whose new value a reload (SIGHUP)
// applies to the running provider, each with what applies it (Key.Live).
// Every other key of the type keeps its running value until a restart,
// and the reload says so (see Live.Reload).
func (t Type) Live() map[string]func(auth.Provider, *ini.Section) error {
	live := map[string]func(auth.Provider, *ini.Section) error{}
	for _, k := range t.Keys {
		if k.Live != nil {
			live[k.Name] = k.Live
		}
	}
	return live
}

// Secrets returns the type's Secret keys, each with what it holds: a file
// that writes one of them itself (not as ${NAME}) must be private to its
// owner (config.Config.CheckSecrets).
func (t Type) Secrets() map[string]string {
	out := map[string]string{}
	for _, k := range t.Keys {
		if k.Kind == Secret {
			out[k.Name] = k.Holds
		}
	}
	return out
}

// knownKeys is every key some type reads, plus "type".
func knownKeys() map[string]bool {
	known := map[string]bool{"type": true}
	for _, t := range types {
		for _, k := range t.Keys {
			known[k.Name] = true
		}
	}
	return known
}

// ErrInvalid is returned by NewProvider when the configuration cannot be used; the
// details are in the section's report.
var ErrInvalid = errors.New("app: invalid authentication configuration")

// NewProvider builds the provider of the type named in s (the [authentication]
// section; type none when it has no type key). lookupEnv reads
// BACKUP_SECRET_KEY for the types that need it. Every problem found is
// recorded in s's report, so check-config can show them all; NewProvider returns
// ErrInvalid when any of them is an error. It is BuildProvider with the
// secret key read from the environment.
func NewProvider(s *ini.Section, deps auth.Deps, lookupEnv func(string) (string, bool)) (auth.Provider, error) {
	deps.PreviousSecretKey = PreviousSecret(lookupEnv)
	_, p, err := BuildProvider(s, deps, EnvSecret(lookupEnv))
	return p, err
}

// BuildProvider builds the provider of the type named in s, as NewProvider
// does, with the secret key of the types that need one given by secret:
// the one way a provider is built, by the program (Open, from
// BACKUP_SECRET_KEY) and by the root package (from its caller's options).
// secret's error is recorded at the type key. It also returns the type s
// names.
func BuildProvider(s *ini.Section, deps auth.Deps, secret func() ([]byte, error)) (Type, auth.Provider, error) {
	return buildProvider(s, nil, deps, secret)
}

// BuildProviderWith is BuildProvider with the [ldap] section (users =
// ldap; nil when there is none), made with SectionsOf.
func BuildProviderWith(s, ldap *ini.Section, deps auth.Deps, secret func() ([]byte, error)) (Type, auth.Provider, error) {
	return buildProvider(s, ldap, deps, secret)
}

// buildProvider is BuildProvider with the [ldap] section of the file, for
// users = ldap.
func buildProvider(s, ldap *ini.Section, deps auth.Deps, secret func() ([]byte, error)) (Type, auth.Provider, error) {
	before := s.Report().ErrorCount()
	t, key, secretOK, err := resolve(s, secret)
	if err != nil {
		return Type{}, nil, err
	}
	deps.SecretKey = key
	p := t.build(s, ldap, deps, secretOK)
	if p == nil || s.Report().ErrorCount() > before {
		return t, nil, ErrInvalid
	}
	return t, p, nil
}

// CheckProvider validates s as NewProvider does, recording every problem in s's report,
// and builds nothing: no file is opened or created, no connection made
// (the user file and the login template are read, as they must be to be
// checked). It returns the type named, and ErrInvalid when any problem is
// an error.
func CheckProvider(s *ini.Section, lookupEnv func(string) (string, bool)) (Type, error) {
	t, _, err := checkProvider(s, lookupEnv, &loadEnv{})
	return t, err
}

// checkProvider is CheckProvider that also returns the type's typed
// configuration, from which Check reads the files it names, with env
// what the loader knows besides the section.
func checkProvider(s *ini.Section, lookupEnv func(string) (string, bool), env *loadEnv) (Type, any, error) {
	before := s.Report().ErrorCount()
	t, _, secretOK, err := resolve(s, EnvSecret(lookupEnv))
	if err != nil {
		return Type{}, nil, err
	}
	cfg, ok := t.check(s, env)
	if !ok || !secretOK || s.Report().ErrorCount() > before {
		return t, cfg, ErrInvalid
	}
	return t, cfg, nil
}

// resolve finds the type s names, warns about keys it does not read, and
// reads the secret key when the type needs one (secretOK false when it is
// missing or short, with the error recorded).
func resolve(s *ini.Section, secret func() ([]byte, error)) (t Type, key []byte, secretOK bool, err error) {
	if s.Present() && !s.Has("type") {
		s.Errorf("", "has no type key; add a line type = <%s> (only a file without an [%s] section means type none)", strings.Join(Names(), "|"), Section)
		return Type{}, nil, false, ErrInvalid
	}
	name := s.String("type", none.Name)
	t, ok := Lookup(strings.TrimSpace(name))
	if !ok {
		s.Errorf("type", "unknown authentication type %q; valid types are %s", name, strings.Join(Names(), ", "))
		return Type{}, nil, false, ErrInvalid
	}
	warnKeys(s, t)
	secretOK = true
	if t.NeedsSecret {
		if key, err = secret(); err != nil {
			s.Errorf("type", "%v", err)
			secretOK = false
		}
	}
	return t, key, secretOK, nil
}

// warnKeys warns about keys no type knows and keys the chosen type ignores.
// A near miss of a known key (use_bycrypt, user_file) is an error: the
// setting the operator meant would silently not apply.
func warnKeys(s *ini.Section, t Type) {
	known := knownKeys()
	for _, k := range s.Keys() {
		switch {
		case k == "type":
		case !known[k]:
			if want, ok := ini.Suggest(k, slices.Sorted(maps.Keys(known))); ok {
				s.Errorf(k, "unknown key; did you mean %s?", want)
			} else {
				s.Warnf(k, "unknown key; it is ignored")
			}
		case k == "second_factor" && !t.Reads(k):
			// A second factor the operator asked for must not silently
			// not apply.
			if v := strings.ToLower(strings.TrimSpace(s.String(k, ""))); v != "" && v != "off" {
				s.Errorf(k, "applies to authentication type %s only; with %s, set up a second factor where the users sign in (for oauth, at the identity provider), or remove the key", login.Name, t.Name)
			}
		case !t.Reads(k):
			s.Warnf(k, "is not used by authentication type %s; it is ignored", t.Name)
		}
	}
}

// CheckPlacement records an error for every [authentication] key found in
// another section of f. Such a key almost always means that the
// [authentication] header above it was commented out or misspelt, and
// reading the file as it stands would start with no authentication. The
// [DEFAULT] section is checked too when f has no [authentication] section,
// since its keys would then configure nothing. Keys that also belong to the
// section they are in (own lists the keys each section reads) are allowed.
func CheckPlacement(f *ini.File, own map[string][]string) {
	known := knownKeys()
	sections := f.Sections()
	if !f.Has(Section) {
		sections = append(sections, ini.DefaultSection)
	}
	for _, name := range sections {
		if name == Section {
			continue
		}
		sec := f.Section(name)
		for _, k := range sec.OwnKeys() {
			if known[k] && !slices.Contains(own[name], k) {
				sec.Errorf(k, "is an [%s] key but it is in [%s]; is the [%s] header above it commented out, misspelt or missing?", Section, name, Section)
			}
		}
	}
}

// EnvSecret returns the secret of BuildProvider that reads and checks
// BACKUP_SECRET_KEY through lookupEnv.
func EnvSecret(lookupEnv func(string) (string, bool)) func() ([]byte, error) {
	return func() ([]byte, error) { return secretKey(lookupEnv) }
}

// secretKey reads and checks BACKUP_SECRET_KEY, and
// BACKUP_SECRET_KEY_PREVIOUS when it is set (PreviousSecret reads it).
func secretKey(lookupEnv func(string) (string, bool)) ([]byte, error) {
	v, ok := lookupEnv(SecretEnv)
	if !ok || v == "" {
		return nil, fmt.Errorf("this type keeps sessions and needs the environment variable %s; make one with `backupweb gen-secret`", SecretEnv)
	}
	if len(v) < MinSecretLen {
		return nil, fmt.Errorf("environment variable %s is shorter than %d characters; make a new one with `backupweb gen-secret`", SecretEnv, MinSecretLen)
	}
	if prev, ok := lookupEnv(PreviousEnv); ok && prev != "" {
		if len(prev) < MinSecretLen {
			return nil, fmt.Errorf("environment variable %s is shorter than %d characters; set it to the key in force before the rotation, or leave it unset", PreviousEnv, MinSecretLen)
		}
		if prev == v {
			return nil, fmt.Errorf("environment variable %s is the same as %s; set it to the key in force before the rotation, or leave it unset", PreviousEnv, SecretEnv)
		}
	}
	return []byte(v), nil
}

// PreviousEnv names the previous secret key, optional: during a rotation,
// the key in force before BACKUP_SECRET_KEY, accepted for reading what
// was made under it (see docs/operations.md, "Rotating the secret key").
const PreviousEnv = "BACKUP_SECRET_KEY_PREVIOUS"

// PreviousSecret returns BACKUP_SECRET_KEY_PREVIOUS through lookupEnv, nil
// when it is unset or empty. secretKey checks it, so a provider built
// through BuildProvider never gets a bad one.
func PreviousSecret(lookupEnv func(string) (string, bool)) []byte {
	if v, ok := lookupEnv(PreviousEnv); ok && v != "" {
		return []byte(v)
	}
	return nil
}
