package oauth

import (
	"cmp"
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"

	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/auth/sessionauth"
)

// Config is the typed configuration of an OAuth provider. The program
// fills it from the [authentication] section with every default applied
// (Resolve); New applies the same defaults to fields left empty, so a
// Config built by hand needs only the provider, the client credentials,
// the redirect URL and a rule.
type Config struct {
	// Provider is the identity provider's kind: google, github, gitlab or
	// generic (see ProviderNames). Required.
	Provider string
	// ClientID and ClientSecret are the OAuth client's credentials, issued
	// when the application is registered with the provider. Required. The
	// secret is never logged nor shown.
	ClientID, ClientSecret string
	// RedirectURL is redirect_uri: an absolute http or https URL whose
	// path is CallbackPath. Required; it must equal the address registered
	// with the provider exactly.
	RedirectURL string
	// Rule says which accounts may sign in. An empty rule is refused;
	// authorized_domains = * admits everyone the provider vouches for.
	// Its lists by group must be ones the provider honours: Orgs and
	// Teams for github, Groups for gitlab and generic. Its HostedDomain is
	// set for google.
	Rule Rule
	// GroupsClaim names the claim whose values are the account's groups
	// (groups_claim), for provider generic only. Default
	// DefaultGroupsClaim ("groups").
	GroupsClaim string
	// Issuer, when set, makes the provider OpenID Connect: endpoints come
	// from discovery at Issuer, and the ID token is verified. Default for
	// google: https://accounts.google.com; empty for the others.
	Issuer string
	// BaseURL is GitLab's address (default https://gitlab.com); the
	// gitlab endpoints not set explicitly are derived from it.
	BaseURL string
	// AuthURL, TokenURL and UserinfoURL override the provider's endpoints
	// (authorization_endpoint, token_endpoint, userinfo_endpoint). Empty:
	// the provider's built-in or discovered ones.
	AuthURL, TokenURL, UserinfoURL string
	// EndSessionURL is end_session_endpoint: where sign-out sends the
	// browser to end the identity provider's session too (OpenID Connect
	// RP-initiated logout), in place of the one discovery gives. Provider
	// generic only. Empty: the discovered one, or none (sign-out ends the
	// local session only, as for GitHub).
	EndSessionURL string
	// PostLogoutURL is post_logout_redirect_uri: where the identity
	// provider sends the browser back after its sign-out; it must be
	// registered with the provider exactly. Empty: the top page of
	// RedirectURL's site.
	PostLogoutURL string
	// Scopes are requested at the authorization endpoint. Default: the
	// provider's (google, generic: openid email profile; github:
	// user:email; gitlab: read_user email).
	Scopes []string
	// Settings are the session keys every session type shares
	// (session_idle_timeout, idle_renewal, session_lifetime,
	// max_sessions_per_user), with their defaults.
	sessionauth.Settings
}

// OpenIDConnect reports whether the configuration uses OpenID Connect
// (discovery, ID token, nonce).
func (c Config) OpenIDConnect() bool { return c.Issuer != "" }

// withDefaults returns c with the defaults of kind k in the empty fields.
func (c Config) withDefaults(k *kind) Config {
	c.Provider = k.name
	if c.Issuer == "" {
		c.Issuer = k.issuer
	}
	if c.BaseURL == "" {
		c.BaseURL = k.baseURL
	}
	if !c.OpenIDConnect() {
		c.AuthURL = cmp.Or(c.AuthURL, k.endpoint(c.BaseURL, k.authURL))
		c.TokenURL = cmp.Or(c.TokenURL, k.endpoint(c.BaseURL, k.tokenURL))
		c.UserinfoURL = cmp.Or(c.UserinfoURL, k.endpoint(c.BaseURL, k.userinfoURL))
	}
	if len(c.Scopes) == 0 {
		c.Scopes = slices.Clone(k.scopes)
	}
	if k.groups != nil && c.Rule.ByGroup() && !slices.ContainsFunc(c.Scopes, func(s string) bool { return slices.Contains(k.groupScopes, s) }) {
		c.Scopes = append(slices.Clone(c.Scopes), k.groupScopes[0])
	}
	if k.groupsClaim && c.GroupsClaim == "" {
		c.GroupsClaim = DefaultGroupsClaim
	}
	c.Rule.HostedDomain = c.Rule.HostedDomain || k.hostedDomain
	c.Settings = c.Settings.WithDefaults()
	return c
}

// KnownProvider reports whether name is a value of the provider key (any
// case; see ProviderNames).
func KnownProvider(name string) bool {
	_, ok := lookupKind(name)
	return ok
}

// Resolve applies the rules of the provider c names (a known one) and
// returns c with its defaults filled in, and the problems in order: an
// issuer or base_url the provider does not use is dropped with a warning
// (*auth.Warning); provider generic without issuer needs the three
// endpoint keys (isSet tells whether a key is set in the configuration,
// even to a value that was refused); OpenID Connect needs the openid
// scope; github's scopes without user:email draw a warning. Each problem
// is a *auth.KeyError naming its key.
func (c Config) Resolve(isSet func(key string) bool) (Config, []error) {
	k, ok := lookupKind(c.Provider)
	if !ok {
		return c, nil
	}
	var problems []error
	warn := func(key, msg string) {
		problems = append(problems, &auth.Warning{Err: &auth.KeyError{Key: key, Err: errors.New(msg)}})
	}
	if c.Issuer != "" && !k.issuerKey {
		warn("issuer", fmt.Sprintf("is not used by provider %s; it is ignored", k.name))
		c.Issuer = ""
	}
	if c.BaseURL != "" && k.baseURL == "" {
		warn("base_url", "is used only by provider gitlab; it is ignored")
		c.BaseURL = ""
	}
	if c.EndSessionURL != "" && k.name != "generic" {
		warn("end_session_endpoint", fmt.Sprintf("is used only by provider generic (provider %s's sign-out address, when it has one, comes from discovery); it is ignored", k.name))
		c.EndSessionURL = ""
	}
	if k.name == "generic" && c.Issuer == "" {
		for _, key := range []string{"authorization_endpoint", "token_endpoint", "userinfo_endpoint"} {
			if !isSet(key) {
				problems = append(problems, &auth.KeyError{Key: key, Err: errors.New("missing required key: provider generic needs authorization_endpoint, token_endpoint and userinfo_endpoint, or an issuer for OpenID Connect discovery")})
			}
		}
	}
	c = c.withDefaults(k)
	switch {
	case c.OpenIDConnect() && !slices.Contains(c.Scopes, "openid"):
		problems = append(problems, &auth.KeyError{Key: "scopes", Err: fmt.Errorf("must include openid: provider %s is used with OpenID Connect", k.name)})
	case k.name == "github" && !slices.Contains(c.Scopes, "user:email"):
		warn("scopes", "lacks user:email, without which GitHub does not tell the account's e-mail addresses")
	}
	return c, problems
}

// ParseRedirect checks a redirect_uri value that is set: an absolute http
// or https URL whose path is CallbackPath, without query or fragment. It
// returns the value, or "" and the error; plain http to another machine
// draws a warning (*auth.Warning). Each problem is a *auth.KeyError at
// redirect_uri.
func ParseRedirect(v string) (string, []error) {
	if err := checkRedirect(v); err != nil {
		return "", []error{&auth.KeyError{Key: "redirect_uri", Err: err}}
	}
	if u, _ := url.Parse(v); u.Scheme == "http" && !isLoopback(u.Hostname()) {
		return v, []error{&auth.Warning{Err: &auth.KeyError{Key: "redirect_uri", Err: errors.New("uses http: the authorization code would cross the network unencrypted, and providers such as Google accept http only for localhost; behind a TLS proxy write https://")}}}
	}
	return v, nil
}

// RedirectHint says what redirect_uri must be.
const RedirectHint = "set it to this service's public address followed by " + CallbackPath + ", as registered with the identity provider (e.g. https://backups.example.com" + CallbackPath + ")"

// checkRedirect is the rule of redirect_uri: an absolute http or https URL
// whose path is CallbackPath, without query, fragment or user.
func checkRedirect(v string) error {
	u, err := url.Parse(v)
	switch {
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Opaque != "":
		return fmt.Errorf("must be an absolute http:// or https:// URL; %s", RedirectHint)
	case u.EscapedPath() != CallbackPath:
		return fmt.Errorf("its path must be %s (this service serves the callback there); %s", CallbackPath, RedirectHint)
	case u.RawQuery != "" || u.Fragment != "" || u.User != nil:
		return fmt.Errorf("must not have a query, a fragment or a user name; %s", RedirectHint)
	}
	return nil
}

// checkEndpoint is the rule of the endpoint, issuer and base_url keys: an
// absolute http or https URL without fragment or user name.
func checkEndpoint(v string) error {
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Fragment != "" || u.User != nil {
		return errors.New("must be an absolute http:// or https:// URL without fragment or user name")
	}
	return nil
}

// Validate reports what makes c unusable, each problem a *auth.KeyError
// naming its key (errors.Join of them): an unknown provider, a missing
// client id, secret or redirect URL, a redirect URL or endpoint of the
// wrong shape, a generic provider without endpoints or issuer, a rule that
// admits nobody or has malformed entries, OpenID Connect without the
// openid scope. The program's loader records them at their keys (with its
// warnings); New returns them. Messages never hold the client secret.
func (c Config) Validate() error {
	var errs []error
	bad := func(key string, err error) { errs = append(errs, &auth.KeyError{Key: key, Err: err}) }
	k, known := lookupKind(c.Provider)
	if !known {
		bad("provider", fmt.Errorf("unknown provider %q; valid providers are %s", c.Provider, strings.Join(ProviderNames(), ", ")))
	}
	for key, v := range map[string]string{"client_id": c.ClientID, "client_secret": c.ClientSecret, "redirect_uri": c.RedirectURL} {
		if v == "" {
			bad(key, errors.New("missing required key"))
		}
	}
	if c.RedirectURL != "" {
		if err := checkRedirect(c.RedirectURL); err != nil {
			bad("redirect_uri", err)
		}
	}
	for key, v := range map[string]string{"authorization_endpoint": c.AuthURL, "token_endpoint": c.TokenURL, "userinfo_endpoint": c.UserinfoURL, "issuer": c.Issuer, "base_url": c.BaseURL,
		"end_session_endpoint": c.EndSessionURL, "post_logout_redirect_uri": c.PostLogoutURL} {
		if v != "" {
			if err := checkEndpoint(v); err != nil {
				bad(key, err)
			}
		}
	}
	if c.Rule.Empty() {
		bad("authorized_domains", errors.New(emptyRule))
	}
	for _, d := range c.Rule.Domains {
		if err := checkDomain(d); err != nil {
			bad("authorized_domains", err)
		}
	}
	for _, u := range c.Rule.Users {
		if err := checkUser(u); err != nil {
			bad("authorized_users", err)
		}
	}
	errs = append(errs, checkGroupRule(c.Rule, c.GroupsClaim)...)
	if known {
		errs = append(errs, k.refuseGroupKeys(c.Rule, c.GroupsClaim)...)
		if k.name == "generic" && c.Issuer == "" {
			for key, v := range map[string]string{"authorization_endpoint": c.AuthURL, "token_endpoint": c.TokenURL, "userinfo_endpoint": c.UserinfoURL} {
				if v == "" {
					bad(key, errors.New("missing required key: provider generic needs authorization_endpoint, token_endpoint and userinfo_endpoint, or an issuer for OpenID Connect discovery"))
				}
			}
		}
		if d := c.withDefaults(k); d.OpenIDConnect() && !slices.Contains(d.Scopes, "openid") {
			bad("scopes", fmt.Errorf("must include openid: provider %s is used with OpenID Connect", k.name))
		}
	}
	slices.SortFunc(errs, func(a, b error) int { return strings.Compare(a.Error(), b.Error()) })
	return errors.Join(errs...)
}

// ParseEndpoint checks the optional absolute http(s) URL v of key (an
// endpoint, issuer or base_url): it returns v trimmed, "" when it is empty
// or refused (a *auth.KeyError), and warns (*auth.Warning) of plain http
// to another machine.
func ParseEndpoint(key, v string) (string, []error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return "", nil
	}
	if err := checkEndpoint(v); err != nil {
		return "", []error{&auth.KeyError{Key: key, Err: err}}
	}
	if u, _ := url.Parse(v); u.Scheme == "http" && !isLoopback(u.Hostname()) {
		return v, []error{&auth.Warning{Err: &auth.KeyError{Key: key, Err: errors.New("uses http: the client secret, codes and tokens would cross the network unencrypted; use https://")}}}
	}
	return v, nil
}

// RuleLists are the lists of the admission keys as written:
// authorized_domains, authorized_users, authorized_orgs, authorized_teams
// and authorized_groups.
type RuleLists struct {
	Domains, Users, Orgs, Teams, Groups []string
}

// ParseRule builds the Rule of the admission keys' lists, leaving out the
// entries it refuses. Each problem is a *auth.KeyError at its key, in
// order: a "*" that is not alone, malformed entries, and a rule that
// admits nobody.
func ParseRule(l RuleLists) (Rule, []error) {
	var r Rule
	var problems []error
	bad := func(key string, err error) { problems = append(problems, &auth.KeyError{Key: key, Err: err}) }
	if slices.Contains(l.Domains, AllDomains) {
		if len(l.Domains) > 1 {
			bad("authorized_domains", errors.New(`"*" admits every account and must be the only entry`))
		}
		r.All = true
	} else {
		for _, d := range l.Domains {
			if err := checkDomain(d); err != nil {
				bad("authorized_domains", err)
				continue
			}
			r.Domains = append(r.Domains, strings.ToLower(d))
		}
	}
	for _, u := range l.Users {
		if err := checkUser(u); err != nil {
			bad("authorized_users", err)
			continue
		}
		r.Users = append(r.Users, u)
	}
	r.Orgs = parseGroupList(l.Orgs, keyOrgs, checkOrg, true, bad)
	r.Teams = parseGroupList(l.Teams, keyTeams, checkTeam, true, bad)
	r.Groups = parseGroupList(l.Groups, keyGroups, checkGroup, false, bad)
	if len(l.Domains) == 0 && len(l.Users) == 0 && len(l.Orgs)+len(l.Teams)+len(l.Groups) == 0 {
		bad("authorized_domains", errors.New(emptyRule))
	}
	return r, problems
}

// emptyRule says what to do about a rule that admits nobody.
const emptyRule = "set authorized_domains or authorized_users (or authorized_orgs, authorized_teams, authorized_groups, as the provider allows) to say who may sign in; authorized_domains = * admits every account the identity provider vouches for"

// isLoopback reports whether host names this machine.
func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// postLogoutURL is post_logout_redirect_uri in force: PostLogoutURL, or
// the top page of RedirectURL's site.
func (c Config) postLogoutURL() string {
	if c.PostLogoutURL != "" {
		return c.PostLogoutURL
	}
	u, err := url.Parse(c.RedirectURL)
	if err != nil {
		return ""
	}
	return (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: "/"}).String()
}

// String describes the configuration for logs, without the secret.
func (c Config) String() string {
	return fmt.Sprintf("provider=%s client_id=%s redirect_uri=%s issuer=%s", c.Provider, c.ClientID, c.RedirectURL, c.Issuer)
}
