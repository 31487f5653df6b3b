package app

import (
	"strings"

	"github.com/backupweb/backupweb/internal/auth/oauth"
	"github.com/backupweb/backupweb/internal/ini"
)

// loadOAuth reads an oauth.Config from the [authentication] section.
// Every problem is recorded in the section's report with its key and line:
// missing keys for the chosen provider, an unknown provider (listing the
// valid ones), a redirect_uri that is not an absolute http(s) URL ending
// in /oauth/callback, malformed endpoint URLs, neither authorized_domains
// nor authorized_users set. ok is false when the configuration cannot be
// used. Messages never contain the client secret.
func loadOAuth(s *ini.Section) (cfg oauth.Config, ok bool) {
	before := s.Report().ErrorCount()
	name := strings.TrimSpace(s.RequireHint("provider", "set it to one of "+strings.Join(oauth.ProviderNames(), ", ")))
	known := oauth.KnownProvider(name)
	if name != "" && !known {
		s.Errorf("provider", "unknown provider %q; valid providers are %s", name, strings.Join(oauth.ProviderNames(), ", "))
	}
	cfg = oauth.Config{
		Provider:      name,
		ClientID:      s.RequireHint("client_id", "set it to the client (application) id the identity provider issued"),
		ClientSecret:  s.RequireHint("client_secret", "set it to the client secret the identity provider issued, preferably as ${NAME} of an environment variable"),
		RedirectURL:   loadRedirect(s),
		Rule:          loadRule(s),
		GroupsClaim:   loadClaim(s),
		AuthURL:       loadURL(s, "authorization_endpoint"),
		TokenURL:      loadURL(s, "token_endpoint"),
		UserinfoURL:   loadURL(s, "userinfo_endpoint"),
		Scopes:        s.List("scopes"),
		Issuer:        loadURL(s, "issuer"),
		BaseURL:       strings.TrimRight(loadURL(s, "base_url"), "/"),
		EndSessionURL: loadURL(s, "end_session_endpoint"),
		PostLogoutURL: loadURL(s, "post_logout_redirect_uri"),
		Settings:      loadSettings(s),
	}
	if known {
		var problems []error
		cfg, problems = cfg.Resolve(s.Has)
		s.Record(problems...)
		// The rules New applies, in one place; what was found already at
		// a key is not said twice.
		s.Record(cfg.Validate())
	}
	return cfg, s.Report().ErrorCount() == before
}

// loadRedirect reads redirect_uri (see oauth.ParseRedirect).
func loadRedirect(s *ini.Section) string {
	v := s.RequireHint("redirect_uri", oauth.RedirectHint)
	if v == "" {
		return ""
	}
	v, problems := oauth.ParseRedirect(v)
	s.Record(problems...)
	return v
}

// loadURL reads an optional absolute http(s) URL (see oauth.ParseEndpoint).
func loadURL(s *ini.Section, key string) string {
	v, problems := oauth.ParseEndpoint(key, s.String(key, ""))
	s.Record(problems...)
	return v
}

// loadRule reads the admission keys (see oauth.ParseRule).
func loadRule(s *ini.Section) oauth.Rule {
	r, problems := oauth.ParseRule(oauth.RuleLists{
		Domains: s.List("authorized_domains"),
		Users:   s.List("authorized_users"),
		Orgs:    s.List("authorized_orgs"),
		Teams:   s.List("authorized_teams"),
		Groups:  s.List("authorized_groups"),
	})
	s.Record(problems...)
	return r
}

// loadClaim reads groups_claim; empty when it is not set.
func loadClaim(s *ini.Section) string {
	if !s.Has("groups_claim") {
		return ""
	}
	v, problems := oauth.ParseClaim(s.String("groups_claim", ""))
	s.Record(problems...)
	return v
}
