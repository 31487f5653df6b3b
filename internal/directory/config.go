package directory

import (
	"crypto/x509"
	"errors"
	"fmt"
	"net/url"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/go-ldap/ldap/v3"

	"github.com/backupweb/backupweb/internal/auth"
)

// Presets: the kinds of directory whose defaults Config knows.
const (
	// PresetOpenLDAP is OpenLDAP (and 389 Directory Server, FreeIPA):
	// people are inetOrgPerson entries named by uid, groups are
	// groupOfNames listing their members' DNs.
	PresetOpenLDAP = "openldap"
	// PresetActiveDirectory is Active Directory and Samba AD: people are
	// user entries named by sAMAccountName; a user's groups are found with
	// the in-chain matching rule, so nested groups count.
	PresetActiveDirectory = "active-directory"
)

// InChainRule is Active Directory's LDAP_MATCHING_RULE_IN_CHAIN: member
// compared with it matches the groups a DN belongs to directly or through
// groups inside groups.
const InChainRule = "1.2.840.113556.1.4.1941"

// Defaults of Config.
const (
	DefaultTimeout            = 5 * time.Second
	DefaultGroupNameAttribute = "cn"
	DefaultEmailAttribute     = "mail"
	// DefaultPoolSize is how many service-account connections are kept
	// and used at once at most.
	DefaultPoolSize = 4
)

// presets holds the defaults of each preset.
var presets = map[string]struct{ userFilter, groupsFilter string }{
	PresetOpenLDAP: {
		userFilter:   "(&(objectClass=person)(uid={username}))",
		groupsFilter: "(&(objectClass=groupOfNames)(member={dn}))",
	},
	PresetActiveDirectory: {
		userFilter:   "(&(objectClass=user)(sAMAccountName={username}))",
		groupsFilter: "(&(objectClass=group)(member:" + InChainRule + ":={dn}))",
	},
}

// Config is the [ldap] section, typed. Its zero fields take the defaults
// of Preset (WithDefaults).
type Config struct {
	// URL is ldaps://host:636 or ldap://host:389. Required.
	URL string
	// StartTLS upgrades an ldap:// connection with StartTLS.
	StartTLS bool
	// Insecure allows ldap:// without StartTLS: passwords cross the
	// network in the clear. Default false.
	Insecure bool
	// CAFile is the PEM of the CA that signed the directory's certificate;
	// empty: the system's roots.
	CAFile string
	// BindDN and BindPassword are the service account that searches.
	// Required.
	BindDN, BindPassword string
	// BaseDN is where users and groups are searched. Required.
	BaseDN string
	// UserFilter finds a user's entry; "{username}" is replaced by the
	// name given, escaped as RFC 4515 says. It must hold one equality
	// "(ATTR={username})": ATTR's value in the entry is the user's name
	// from then on (the directory's spelling, whatever letter case was
	// typed).
	UserFilter string
	// GroupsFilter finds the user's groups; "{dn}" is replaced by the
	// user's DN and "{username}" by the user's name, both escaped.
	GroupsFilter string
	// GroupNameAttribute is the attribute of a group entry that names it
	// in [access] group:NAME rules. Default "cn".
	GroupNameAttribute string
	// EmailAttribute is the user's e-mail address. Default "mail".
	EmailAttribute string
	// Preset is PresetOpenLDAP (default) or PresetActiveDirectory: the
	// defaults of UserFilter and GroupsFilter.
	Preset string
	// Timeout bounds one directory operation (connecting, TLS, each bind
	// and search). Default DefaultTimeout.
	Timeout time.Duration
	// PoolSize bounds the service account's connections. Not a key.
	// Default DefaultPoolSize.
	PoolSize int
}

// WithDefaults returns c with its zero fields at their defaults: the
// preset's filters, the attribute names, the timeout and the pool size.
func (c Config) WithDefaults() Config {
	if c.Preset == "" {
		c.Preset = PresetOpenLDAP
	}
	if p, ok := presets[c.Preset]; ok {
		if c.UserFilter == "" {
			c.UserFilter = p.userFilter
		}
		if c.GroupsFilter == "" {
			c.GroupsFilter = p.groupsFilter
		}
	}
	if c.GroupNameAttribute == "" {
		c.GroupNameAttribute = DefaultGroupNameAttribute
	}
	if c.EmailAttribute == "" {
		c.EmailAttribute = DefaultEmailAttribute
	}
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	if c.PoolSize <= 0 {
		c.PoolSize = DefaultPoolSize
	}
	return c
}

// nameInFilter finds "(ATTR={username})" in a user filter.
var nameInFilter = regexp.MustCompile(`\(([A-Za-z][A-Za-z0-9-]*|[0-9]+(?:\.[0-9]+)+)=\{username\}\)`)

// attrName is an attribute description as a key may give one.
var attrName = regexp.MustCompile(`^([A-Za-z][A-Za-z0-9-]*|[0-9]+(?:\.[0-9]+)+)$`)

// NameAttribute returns the attribute the user filter compares with
// {username}: the attribute whose value is the user's name.
func (c Config) NameAttribute() string {
	m := nameInFilter.FindStringSubmatch(c.WithDefaults().UserFilter)
	if m == nil {
		return ""
	}
	return m[1]
}

// Validate reports what makes c unusable (defaults applied first), each
// problem an *auth.KeyError at its key of [ldap]: a URL that is not
// ldap:// or ldaps:// with a host, ldap:// without start_tls or insecure,
// start_tls with ldaps://, a filter that does not parse or lacks its
// placeholder, an unknown preset, a ca_file that cannot be read or holds
// no certificate, a missing bind_dn, bind_password or base_dn. Messages
// never hold the password.
func (c Config) Validate() error {
	c = c.WithDefaults()
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, &auth.KeyError{Key: key, Err: fmt.Errorf(format, args...)})
	}
	if _, ok := presets[c.Preset]; !ok {
		bad("preset", "unknown value %q; valid values are %s and %s", c.Preset, PresetOpenLDAP, PresetActiveDirectory)
	}
	c.validateURL(bad)
	if c.CAFile != "" {
		if _, err := readCA(c.CAFile); err != nil {
			bad("ca_file", "%v", err)
		}
	}
	for _, k := range []struct{ key, value string }{{"bind_dn", c.BindDN}, {"bind_password", c.BindPassword}, {"base_dn", c.BaseDN}} {
		if strings.TrimSpace(k.value) == "" {
			bad(k.key, "missing required key; add a line \"%s = ...\" under [ldap]", k.key)
		}
	}
	if !strings.Contains(c.UserFilter, "{username}") {
		bad("user_filter", "must contain {username}, where the name given at sign-in goes (escaped), such as (&(objectClass=person)(uid={username}))")
	} else if c.NameAttribute() == "" {
		bad("user_filter", "must compare one attribute with {username} for equality, as (uid={username}): that attribute's value is the user's name")
	} else if _, err := ldap.CompileFilter(fill(c.UserFilter, "x", "")); err != nil {
		bad("user_filter", "is not an LDAP filter (RFC 4515): %v", err)
	}
	if !strings.Contains(c.GroupsFilter, "{dn}") && !strings.Contains(c.GroupsFilter, "{username}") {
		bad("groups_filter", "must contain {dn} (the user's DN) or {username}, such as (&(objectClass=groupOfNames)(member={dn}))")
	} else if _, err := ldap.CompileFilter(fill(c.GroupsFilter, "x", "cn=x")); err != nil {
		bad("groups_filter", "is not an LDAP filter (RFC 4515): %v", err)
	}
	for _, k := range []struct{ key, value string }{{"group_name_attribute", c.GroupNameAttribute}, {"email_attribute", c.EmailAttribute}} {
		if !attrName.MatchString(k.value) {
			bad(k.key, "%q is not an attribute name", k.value)
		}
	}
	return errors.Join(errs...)
}

// validateURL checks url, start_tls and insecure together.
func (c Config) validateURL(bad func(key, format string, args ...any)) {
	u, err := url.Parse(c.URL)
	switch {
	case strings.TrimSpace(c.URL) == "":
		bad("url", "missing required key; add a line \"url = ldaps://HOST:636\" under [ldap]")
		return
	case err != nil:
		bad("url", "is not a URL: %v", err)
		return
	case u.Scheme != "ldap" && u.Scheme != "ldaps":
		bad("url", "must start with ldaps:// or ldap://, not %q", u.Scheme+"://")
		return
	case u.Hostname() == "":
		bad("url", "names no host; write it as ldaps://HOST:636")
		return
	case u.Path != "" && u.Path != "/" || u.RawQuery != "" || u.User != nil:
		bad("url", "must be only ldaps://HOST[:PORT] or ldap://HOST[:PORT]: the base DN goes in base_dn, the account in bind_dn")
		return
	}
	switch {
	case u.Scheme == "ldaps" && c.StartTLS:
		bad("start_tls", "is for ldap:// URLs; an ldaps:// connection is TLS from the start")
	case u.Scheme == "ldap" && !c.StartTLS && !c.Insecure:
		bad("url", "is ldap:// without start_tls: passwords would cross the network in the clear; use ldaps://, or set start_tls = true (or insecure = true, on a network you trust)")
	}
}

// readCA reads a PEM bundle of CA certificates.
func readCA(path string) (*x509.CertPool, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read the CA file: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(data) {
		return nil, fmt.Errorf("%s holds no PEM certificate", path)
	}
	return pool, nil
}

// fill replaces the placeholders of a filter with values escaped as RFC
// 4515 says: every byte of a user name that could change the filter's
// meaning ( * ( ) \ NUL, and every byte above 0x7f) becomes \XX.
func fill(filter, username, dn string) string {
	return strings.NewReplacer("{username}", ldap.EscapeFilter(username), "{dn}", ldap.EscapeFilter(dn)).Replace(filter)
}
