package oauth

import (
	"strings"

	"golang.org/x/oauth2"
)

// kind is one value of the provider key: the provider's endpoints, scopes
// and the way it tells who signed in, kept as data so that every place that
// needs them reads this one table.
type kind struct {
	// name is the value of the provider key.
	name string
	// issuer is the default OpenID Connect issuer. A kind with one always
	// uses discovery and ID tokens; its issuer key overrides the default.
	issuer string
	// issuerKey tells whether the issuer key may be set: for generic it
	// turns OpenID Connect on.
	issuerKey bool
	// baseURL is the default base_url; when set, the endpoints below are
	// paths under base_url (a self-hosted GitLab).
	baseURL string
	// authURL, tokenURL and userinfoURL are the built-in endpoints (or
	// paths under baseURL); empty ones must come from discovery or from
	// configuration.
	authURL, tokenURL, userinfoURL string
	// scopes are asked for when the scopes key is not set.
	scopes []string
	// authStyle is how the client credentials reach the token endpoint.
	authStyle oauth2.AuthStyle
	// requireVerified refuses an e-mail the provider does not explicitly
	// mark verified; without it only an explicit "not verified" refuses.
	requireVerified bool
	// profile reads the account from the provider's API with the access
	// token, when OpenID Connect is not in use.
	profile profileFunc
	// hostedDomain makes authorized_domains admit only accounts hosted by
	// a listed domain (Google's hd claim); see Rule.HostedDomain.
	hostedDomain bool
	// groupKeys are the admission keys by group the provider honours;
	// the others are refused at start.
	groupKeys []string
	// groups reads the account's groups from the provider's API; nil when
	// they come from a claim, or the provider has none.
	groups groupsFunc
	// groupsClaim says the groups are the values of the claim named by
	// groups_claim, and that the groups_claim key may be set.
	groupsClaim bool
	// foldGroups lowers the groups' ASCII letters: the provider compares
	// its names ignoring case.
	foldGroups bool
	// groupScopes are the scopes under which groups can be read; with one
	// of them in scopes, the groups are read even when no key admits by
	// group. groupScopes[0] is added to scopes when a key admits by group
	// and none is there.
	groupScopes []string
}

// Admission keys by group.
const (
	keyOrgs   = "authorized_orgs"
	keyTeams  = "authorized_teams"
	keyGroups = "authorized_groups"
	keyClaim  = "groups_claim"
)

// kinds is the table of providers, in the order documentation lists them.
var kinds = []kind{
	{
		name:            "google",
		issuer:          "https://accounts.google.com",
		issuerKey:       true,
		scopes:          []string{"openid", "email", "profile"},
		authStyle:       oauth2.AuthStyleInParams,
		requireVerified: true,
		hostedDomain:    true,
	},
	{
		name:            "github",
		authURL:         "https://github.com/login/oauth/authorize",
		tokenURL:        "https://github.com/login/oauth/access_token",
		userinfoURL:     "https://api.github.com/user",
		scopes:          []string{"user:email"},
		authStyle:       oauth2.AuthStyleInParams,
		requireVerified: true,
		profile:         githubProfile,
		groupKeys:       []string{keyOrgs, keyTeams},
		groups:          githubGroups,
		foldGroups:      true,
		groupScopes:     githubOrgScopes,
	},
	{
		name:            "gitlab",
		baseURL:         "https://gitlab.com",
		authURL:         "/oauth/authorize",
		tokenURL:        "/oauth/token",
		userinfoURL:     "/api/v4/user",
		scopes:          []string{"read_user", "email"},
		authStyle:       oauth2.AuthStyleInParams,
		requireVerified: true,
		profile:         gitlabProfile,
		groupKeys:       []string{keyGroups},
		groups:          gitlabGroups,
		groupScopes:     append([]string{"openid"}, gitlabAPIScopes...),
	},
	{
		name:        "generic",
		issuerKey:   true,
		scopes:      []string{"openid", "email", "profile"},
		authStyle:   oauth2.AuthStyleAutoDetect,
		profile:     userinfoProfile,
		groupKeys:   []string{keyGroups},
		groupsClaim: true,
	},
}

// lookupKind finds a provider by name, case-insensitively.
func lookupKind(name string) (*kind, bool) {
	for i := range kinds {
		if strings.EqualFold(kinds[i].name, name) {
			return &kinds[i], true
		}
	}
	return nil, false
}

// ProviderNames returns the valid values of the provider key, for messages
// and documentation.
func ProviderNames() []string {
	names := make([]string, len(kinds))
	for i, k := range kinds {
		names[i] = k.name
	}
	return names
}

// endpoint returns the built-in endpoint path under base when the kind has
// a base URL, else path itself.
func (k *kind) endpoint(base, path string) string {
	if k.baseURL == "" || path == "" {
		return path
	}
	return strings.TrimRight(base, "/") + path
}
