package app

import (
	"slices"

	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/auth/sessionauth"
	"github.com/backupweb/backupweb/internal/ini"
)

// Kind says what an [authentication] key holds: what the program checks
// about it beyond its type's own rules.
type Kind int

const (
	// Text is a plain value the type's loader checks.
	Text Kind = iota
	// Bool is a boolean (1/yes/true/on, 0/no/false/off).
	Bool
	// Number is a whole number.
	Number
	// Duration is a duration ("90s", "15m"; a bare number means seconds).
	Duration
	// List is a list separated by commas or line breaks.
	List
	// URL is an absolute http or https address.
	URL
	// Secret holds a secret: never shown in a message, and a file that
	// writes it itself (not as ${NAME}) must be private to its owner.
	Secret
	// ReadFile names a file the service reads.
	ReadFile
	// RewrittenFile names a file the service reads and rewrites: a new
	// copy written beside it and renamed over it, so the folder that holds
	// it must be writable by the service.
	RewrittenFile
)

// Key declares one [authentication] key of a type: its name and what it
// holds. The declarations drive the unknown-key and near-miss checks, the
// secret checks, check-config -as-service's file access checks and the
// test that every key has its row in docs/configuration.md.
type Key struct {
	// Name is the key as written in the file (lower case).
	Name string
	// Kind says what the key holds.
	Kind Kind
	// Holds says in a few words what a Secret key holds, for the message
	// that asks for a private file.
	Holds string
	// Live, when set, applies a new value of the key to the running
	// provider on reload (SIGHUP); an error means this change needs a
	// restart after all. A key without it keeps its running value until a
	// restart, and the reload says so.
	Live func(p auth.Provider, s *ini.Section) error
}

// IsFile tells whether the key names a file the service reads.
func (k Key) IsFile() bool { return k.Kind == ReadFile || k.Kind == RewrittenFile }

// keys returns the declarations of names, all of kind.
func keys(kind Kind, names ...string) []Key {
	out := make([]Key, len(names))
	for i, n := range names {
		out[i] = Key{Name: n, Kind: kind}
	}
	return out
}

// throttlingKeys are the keys of the password types' throttling
// (loadThrottling).
var throttlingKeys = []Key{
	{Name: "max_failures", Kind: Number, Live: liveThrottling},
	{Name: "failure_window", Kind: Duration, Live: liveThrottling},
	{Name: "attempt_wait", Kind: Duration, Live: liveThrottling},
}

// settingsKeys are the keys of the session types' sessionauth.Settings
// (loadSettings).
var settingsKeys = []Key{
	{Name: "session_idle_timeout", Kind: Duration},
	{Name: sessionauth.RenewalKey, Kind: Text},
	{Name: "session_lifetime", Kind: Duration},
	{Name: "max_sessions_per_user", Kind: Number},
}

// groupsFile is the key of the htgroup file of the types that take
// groups from one (App.openGroups).
var groupsFile = Key{Name: "groups_file", Kind: ReadFile}

// basicKeys are the keys of type basic (loadBasic).
var basicKeys = slices.Concat([]Key{
	usersKey,
	{Name: "username", Kind: Text, Live: liveCredentials},
	{Name: "password", Kind: Secret, Holds: "a password or password hash", Live: liveCredentials},
	{Name: "use_bcrypt", Kind: Bool, Live: liveCredentials},
	{Name: "realm", Kind: Text},
	{Name: "cache_ttl", Kind: Duration},
	groupsFile,
}, throttlingKeys, []Key{
	{Name: "max_user_failures", Kind: Number, Live: liveThrottling},
	{Name: "known_address_days", Kind: Number},
})

// loginKeys are the keys of type flask-login (loadLogin).
var loginKeys = slices.Concat([]Key{
	usersKey,
	{Name: "users_file", Kind: ReadFile},
	{Name: "use_bcrypt", Kind: Bool},
	{Name: "login_view", Kind: Text},
	{Name: "login_template", Kind: ReadFile},
}, settingsKeys, throttlingKeys, []Key{
	{Name: "max_user_failures", Kind: Number, Live: liveThrottling},
	{Name: "second_factor", Kind: Text, Live: liveSecondFactor},
	{Name: "factors_file", Kind: RewrittenFile},
	groupsFile,
	{Name: "passkey_login", Kind: Bool},
	{Name: "tokens_file", Kind: RewrittenFile},
})

// oauthKeys are the keys of type oauth (loadOAuth).
var oauthKeys = slices.Concat([]Key{
	{Name: "provider", Kind: Text},
	{Name: "client_id", Kind: Text},
	{Name: "client_secret", Kind: Secret, Holds: "an OAuth client secret"},
	{Name: "redirect_uri", Kind: URL},
}, keys(List, "authorized_domains", "authorized_users", "authorized_orgs", "authorized_teams", "authorized_groups"), []Key{
	{Name: "groups_claim", Kind: Text},
}, keys(URL, "authorization_endpoint", "token_endpoint", "userinfo_endpoint"), []Key{
	{Name: "scopes", Kind: List},
}, keys(URL, "issuer", "base_url", "end_session_endpoint", "post_logout_redirect_uri"), settingsKeys)
