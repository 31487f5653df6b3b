package oauth

import (
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/backupweb/backupweb/config"
	"github.com/backupweb/backupweb/session"
)

// Keys are the [authentication] keys type oauth reads, besides "type".
var Keys = []string{
	"provider", "client_id", "client_secret", "redirect_uri",
	"authorized_domains", "authorized_users",
	"authorization_endpoint", "token_endpoint", "userinfo_endpoint",
	"scopes", "issuer", "base_url",
	"session_idle_timeout", "session_lifetime", "max_sessions_per_user",
}

// Defaults of Config.
const (
	DefaultIdleTimeout = session.DefaultIdleTimeout // 30 minutes
	DefaultLifetime    = session.DefaultLifetime    // 12 hours
)

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
	// Rule says which e-mail addresses may sign in. Load refuses an empty
	// rule; authorized_domains = * admits everyone the provider vouches for.
	Rule Rule
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
	// SessionIdleTimeout ends a session unused that long. Default 30m.
	SessionIdleTimeout time.Duration
	// SessionLifetime ends a session that long after sign-in. Default 12h.
	SessionLifetime time.Duration
	// MaxSessionsPerUser bounds one user's live sessions; a new sign-in
	// ends the oldest beyond it. Default session.DefaultMaxPerUser (20).
	MaxSessionsPerUser int
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
		c.AuthURL = cmpOr(c.AuthURL, k.endpoint(c.BaseURL, k.authURL))
		c.TokenURL = cmpOr(c.TokenURL, k.endpoint(c.BaseURL, k.tokenURL))
		c.UserinfoURL = cmpOr(c.UserinfoURL, k.endpoint(c.BaseURL, k.userinfoURL))
	}
	if len(c.Scopes) == 0 {
		c.Scopes = slices.Clone(k.scopes)
	}
	if c.SessionIdleTimeout <= 0 {
		c.SessionIdleTimeout = DefaultIdleTimeout
	}
	if c.SessionLifetime <= 0 {
		c.SessionLifetime = DefaultLifetime
	}
	return c
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// Load reads a Config from the [authentication] section. Every problem is
// recorded in the section's report with its key and line: missing keys for
// the chosen provider, an unknown provider (listing the valid ones), a
// redirect_uri that is not an absolute http(s) URL ending in
// /oauth/callback, malformed endpoint URLs, neither authorized_domains nor
// authorized_users set. ok is false when the configuration cannot be used.
// Messages never contain the client secret.
func Load(s *config.Section) (cfg Config, ok bool) {
	before := s.Report().ErrorCount()
	name := strings.TrimSpace(s.RequireHint("provider", "set it to one of "+strings.Join(ProviderNames(), ", ")))
	k, known := lookupKind(name)
	if name != "" && !known {
		s.Errorf("provider", "unknown provider %q; valid providers are %s", name, strings.Join(ProviderNames(), ", "))
	}
	cfg = Config{
		Provider:           name,
		ClientID:           s.RequireHint("client_id", "set it to the client (application) id the identity provider issued"),
		ClientSecret:       s.RequireHint("client_secret", "set it to the client secret the identity provider issued, preferably as ${NAME} of an environment variable"),
		RedirectURL:        loadRedirect(s),
		Rule:               loadRule(s),
		AuthURL:            loadURL(s, "authorization_endpoint"),
		TokenURL:           loadURL(s, "token_endpoint"),
		UserinfoURL:        loadURL(s, "userinfo_endpoint"),
		Scopes:             s.List("scopes"),
		Issuer:             loadURL(s, "issuer"),
		BaseURL:            strings.TrimRight(loadURL(s, "base_url"), "/"),
		SessionIdleTimeout: s.Duration("session_idle_timeout", DefaultIdleTimeout),
		SessionLifetime:    s.Duration("session_lifetime", DefaultLifetime),
		MaxSessionsPerUser: s.Int("max_sessions_per_user", session.DefaultMaxPerUser, 1, 10_000),
	}
	if known {
		cfg = checkKind(s, k, cfg)
	}
	return cfg, s.Report().ErrorCount() == before
}

// checkKind applies the rules of provider k to cfg and fills its defaults.
func checkKind(s *config.Section, k *kind, cfg Config) Config {
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
func loadRedirect(s *config.Section) string {
	const hint = "set it to this service's public address followed by " + CallbackPath + ", as registered with the identity provider (e.g. https://backups.example.com" + CallbackPath + ")"
	v := s.RequireHint("redirect_uri", hint)
	if v == "" {
		return ""
	}
	u, err := url.Parse(v)
	switch {
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Opaque != "":
		s.Errorf("redirect_uri", "must be an absolute http:// or https:// URL; %s", hint)
		return ""
	case u.EscapedPath() != CallbackPath:
		s.Errorf("redirect_uri", "its path must be %s (this service serves the callback there); %s", CallbackPath, hint)
		return ""
	case u.RawQuery != "" || u.Fragment != "" || u.User != nil:
		s.Errorf("redirect_uri", "must not have a query, a fragment or a user name; %s", hint)
		return ""
	case u.Scheme == "http" && !isLoopback(u.Hostname()):
		s.Warnf("redirect_uri", "uses http: the authorization code would cross the network unencrypted, and providers such as Google accept http only for localhost; behind a TLS proxy write https://")
	}
	return v
}

// loadURL reads an optional absolute http(s) URL.
func loadURL(s *config.Section, key string) string {
	v := strings.TrimSpace(s.String(key, ""))
	if v == "" {
		return ""
	}
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Fragment != "" || u.User != nil {
		s.Errorf(key, "must be an absolute http:// or https:// URL without fragment or user name")
		return ""
	}
	if u.Scheme == "http" && !isLoopback(u.Hostname()) {
		s.Warnf(key, "uses http: the client secret, codes and tokens would cross the network unencrypted; use https://")
	}
	return v
}

// loadRule reads authorized_domains and authorized_users.
func loadRule(s *config.Section) Rule {
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
	if len(domains) == 0 && len(users) == 0 {
		s.Errorf("authorized_domains", "set authorized_domains or authorized_users (or both) to say who may sign in; authorized_domains = * admits every account the identity provider vouches for")
	}
	return r
}

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
