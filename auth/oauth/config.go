package oauth

import (
	"cmp"
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"

	"github.com/backupweb/backupweb/auth/sessionauth"
	"github.com/backupweb/backupweb/internal/ini"
)

// Keys are the [authentication] keys type oauth reads, besides "type".
var Keys = slices.Concat([]string{
	"provider", "client_id", "client_secret", "redirect_uri",
	"authorized_domains", "authorized_users",
	keyOrgs, keyTeams, keyGroups, keyClaim,
	"authorization_endpoint", "token_endpoint", "userinfo_endpoint",
	"scopes", "issuer", "base_url",
}, sessionauth.SettingsKeys)

// Config is the typed configuration of an OAuth provider. Load fills it
// from the [authentication] section with every default applied; New applies
// the same defaults to fields left empty, so a Config built by hand needs
// only the provider, the client credentials, the redirect URL and a rule.
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
	// Rule says which accounts may sign in. Load refuses an empty rule;
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

// Load reads a Config from the [authentication] section. Every problem is
// recorded in the section's report with its key and line: missing keys for
// the chosen provider, an unknown provider (listing the valid ones), a
// redirect_uri that is not an absolute http(s) URL ending in
// /oauth/callback, malformed endpoint URLs, neither authorized_domains nor
// authorized_users set. ok is false when the configuration cannot be used.
// Messages never contain the client secret.
func Load(s *ini.Section) (cfg Config, ok bool) {
	before := s.Report().ErrorCount()
	name := strings.TrimSpace(s.RequireHint("provider", "set it to one of "+strings.Join(ProviderNames(), ", ")))
	k, known := lookupKind(name)
	if name != "" && !known {
		s.Errorf("provider", "unknown provider %q; valid providers are %s", name, strings.Join(ProviderNames(), ", "))
	}
	cfg = Config{
		Provider:     name,
		ClientID:     s.RequireHint("client_id", "set it to the client (application) id the identity provider issued"),
		ClientSecret: s.RequireHint("client_secret", "set it to the client secret the identity provider issued, preferably as ${NAME} of an environment variable"),
		RedirectURL:  loadRedirect(s),
		Rule:         loadRule(s),
		GroupsClaim:  loadClaim(s),
		AuthURL:      loadURL(s, "authorization_endpoint"),
		TokenURL:     loadURL(s, "token_endpoint"),
		UserinfoURL:  loadURL(s, "userinfo_endpoint"),
		Scopes:       s.List("scopes"),
		Issuer:       loadURL(s, "issuer"),
		BaseURL:      strings.TrimRight(loadURL(s, "base_url"), "/"),
		Settings:     sessionauth.LoadSettings(s),
	}
	if known {
		cfg = checkKind(s, k, cfg)
		// The rules New applies, in one place; what Load found already
		// at a key is not said twice.
		s.Record(cfg.Validate())
	}
	return cfg, s.Report().ErrorCount() == before
}

// checkKind applies the rules of provider k to cfg and fills its defaults.
func checkKind(s *ini.Section, k *kind, cfg Config) Config {
	if cfg.Issuer != "" && !k.issuerKey {
		s.Warnf("issuer", "is not used by provider %s; it is ignored", k.name)
		cfg.Issuer = ""
	}
	if cfg.BaseURL != "" && k.baseURL == "" {
		s.Warnf("base_url", "is used only by provider gitlab; it is ignored")
		cfg.BaseURL = ""
	}
	if k.name == "generic" && cfg.Issuer == "" {
		for _, key := range []string{"authorization_endpoint", "token_endpoint", "userinfo_endpoint"} {
			if !s.Has(key) {
				s.Errorf(key, "missing required key: provider generic needs authorization_endpoint, token_endpoint and userinfo_endpoint, or an issuer for OpenID Connect discovery")
			}
		}
	}
	cfg = cfg.withDefaults(k)
	switch {
	case cfg.OpenIDConnect() && !slices.Contains(cfg.Scopes, "openid"):
		s.Errorf("scopes", "must include openid: provider %s is used with OpenID Connect", k.name)
	case k.name == "github" && !slices.Contains(cfg.Scopes, "user:email"):
		s.Warnf("scopes", "lacks user:email, without which GitHub does not tell the account's e-mail addresses")
	}
	return cfg
}

// loadRedirect reads redirect_uri: an absolute http or https URL whose path
// is CallbackPath, without query or fragment.
func loadRedirect(s *ini.Section) string {
	v := s.RequireHint("redirect_uri", redirectHint)
	if v == "" {
		return ""
	}
	if err := checkRedirect(v); err != nil {
		s.Errorf("redirect_uri", "%v", err)
		return ""
	}
	if u, _ := url.Parse(v); u.Scheme == "http" && !isLoopback(u.Hostname()) {
		s.Warnf("redirect_uri", "uses http: the authorization code would cross the network unencrypted, and providers such as Google accept http only for localhost; behind a TLS proxy write https://")
	}
	return v
}

// redirectHint says what redirect_uri must be.
const redirectHint = "set it to this service's public address followed by " + CallbackPath + ", as registered with the identity provider (e.g. https://backups.example.com" + CallbackPath + ")"

// checkRedirect is the rule of redirect_uri: an absolute http or https URL
// whose path is CallbackPath, without query, fragment or user.
func checkRedirect(v string) error {
	u, err := url.Parse(v)
	switch {
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Opaque != "":
		return fmt.Errorf("must be an absolute http:// or https:// URL; %s", redirectHint)
	case u.EscapedPath() != CallbackPath:
		return fmt.Errorf("its path must be %s (this service serves the callback there); %s", CallbackPath, redirectHint)
	case u.RawQuery != "" || u.Fragment != "" || u.User != nil:
		return fmt.Errorf("must not have a query, a fragment or a user name; %s", redirectHint)
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

// Validate reports what makes c unusable, each problem a *ini.KeyError
// naming its key (errors.Join of them): an unknown provider, a missing
// client id, secret or redirect URL, a redirect URL or endpoint of the
// wrong shape, a generic provider without endpoints or issuer, a rule that
// admits nobody or has malformed entries, OpenID Connect without the
// openid scope. Load records them at their keys (with its warnings); New
// returns them. Messages never hold the client secret.
func (c Config) Validate() error {
	var errs []error
	bad := func(key string, err error) { errs = append(errs, &ini.KeyError{Key: key, Err: err}) }
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
	for key, v := range map[string]string{"authorization_endpoint": c.AuthURL, "token_endpoint": c.TokenURL, "userinfo_endpoint": c.UserinfoURL, "issuer": c.Issuer, "base_url": c.BaseURL} {
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

// loadURL reads an optional absolute http(s) URL.
func loadURL(s *ini.Section, key string) string {
	v := strings.TrimSpace(s.String(key, ""))
	if v == "" {
		return ""
	}
	if err := checkEndpoint(v); err != nil {
		s.Errorf(key, "%v", err)
		return ""
	}
	if u, _ := url.Parse(v); u.Scheme == "http" && !isLoopback(u.Hostname()) {
		s.Warnf(key, "uses http: the client secret, codes and tokens would cross the network unencrypted; use https://")
	}
	return v
}

// loadRule reads authorized_domains and authorized_users.
func loadRule(s *ini.Section) Rule {
	var r Rule
	domains := s.List("authorized_domains")
	if slices.Contains(domains, AllDomains) {
		if len(domains) > 1 {
			s.Errorf("authorized_domains", `"*" admits every account and must be the only entry`)
		}
		r.All = true
	} else {
		for _, d := range domains {
			if err := checkDomain(d); err != nil {
				s.Errorf("authorized_domains", "%v", err)
				continue
			}
			r.Domains = append(r.Domains, strings.ToLower(d))
		}
	}
	users := s.List("authorized_users")
	for _, u := range users {
		if err := checkUser(u); err != nil {
			s.Errorf("authorized_users", "%v", err)
			continue
		}
		r.Users = append(r.Users, u)
	}
	r.Orgs = loadGroupList(s, keyOrgs, checkOrg, true)
	r.Teams = loadGroupList(s, keyTeams, checkTeam, true)
	r.Groups = loadGroupList(s, keyGroups, checkGroup, false)
	if len(domains) == 0 && len(users) == 0 && len(s.List(keyOrgs))+len(s.List(keyTeams))+len(s.List(keyGroups)) == 0 {
		s.Errorf("authorized_domains", emptyRule)
	}
	return r
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

// String describes the configuration for logs, without the secret.
func (c Config) String() string {
	return fmt.Sprintf("provider=%s client_id=%s redirect_uri=%s issuer=%s", c.Provider, c.ClientID, c.RedirectURL, c.Issuer)
}
