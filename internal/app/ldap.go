package app

import (
	"slices"
	"strings"

	"github.com/backupweb/backupweb/internal/auth/login"
	"github.com/backupweb/backupweb/internal/directory"
	"github.com/backupweb/backupweb/internal/ini"
)

// LDAPSection is the section of the directory users sign in against with
// [authentication] users = ldap.
const LDAPSection = "ldap"

// usersKey is [authentication] users: where users and passwords are
// checked (login.UsersFromFile or login.UsersFromDirectory).
var usersKey = Key{Name: "users", Kind: Text}

// LDAPKeys are the keys of [ldap], in the order the reference lists
// them.
var LDAPKeys = []string{
	"url", "start_tls", "insecure", "ca_file", "bind_dn", "bind_password", "base_dn",
	"user_filter", "groups_filter", "group_name_attribute", "email_attribute", "preset", "timeout",
}

// readUsers reads [authentication] users, recording an unknown value.
func readUsers(s *ini.Section) string {
	v := strings.ToLower(strings.TrimSpace(s.String(usersKey.Name, login.UsersFromFile)))
	if v != login.UsersFromFile && v != login.UsersFromDirectory {
		s.Errorf(usersKey.Name, "unknown value %q; valid values are %s and %s", v, login.UsersFromFile, login.UsersFromDirectory)
		return login.UsersFromFile
	}
	return v
}

// loadDirectory reads [ldap] into a directory.Config and records its
// problems at their keys of [ldap]: a missing section, unknown keys
// (warnings, with a near miss named), and what directory.Config.Validate
// refuses (a bad URL, ldap:// without start_tls or insecure, a filter
// without its placeholder, an unreadable ca_file...). ok is false when it
// cannot be used.
func loadDirectory(auth, s *ini.Section) (cfg directory.Config, ok bool) {
	if s == nil || !s.Present() {
		auth.Errorf(usersKey.Name, "is ldap, but the file has no [%s] section: add one with url, bind_dn, bind_password and base_dn (see docs/authentication.md)", LDAPSection)
		return directory.Config{}, false
	}
	before := s.Report().ErrorCount()
	for _, k := range s.OwnKeys() {
		if slices.Contains(LDAPKeys, k) {
			continue
		}
		if want, near := ini.Suggest(k, LDAPKeys); near {
			s.Warnf(k, "unknown key, ignored; did you mean %s?", want)
		} else {
			s.Warnf(k, "unknown key, ignored; [%s] keys are %s", LDAPSection, strings.Join(LDAPKeys, ", "))
		}
	}
	cfg = directory.Config{
		URL:                strings.TrimSpace(s.String("url", "")),
		StartTLS:           s.Bool("start_tls", false),
		Insecure:           s.Bool("insecure", false),
		CAFile:             strings.TrimSpace(s.String("ca_file", "")),
		BindDN:             strings.TrimSpace(s.String("bind_dn", "")),
		BindPassword:       s.String("bind_password", ""),
		BaseDN:             strings.TrimSpace(s.String("base_dn", "")),
		UserFilter:         strings.TrimSpace(s.String("user_filter", "")),
		GroupsFilter:       strings.TrimSpace(s.String("groups_filter", "")),
		GroupNameAttribute: strings.TrimSpace(s.String("group_name_attribute", "")),
		EmailAttribute:     strings.TrimSpace(s.String("email_attribute", "")),
		Preset:             strings.ToLower(strings.TrimSpace(s.String("preset", ""))),
		Timeout:            s.Duration("timeout", 0),
	}
	if s.Has("timeout") && cfg.Timeout <= 0 {
		s.Errorf("timeout", "must be above zero, such as 5s")
	}
	if cfg.Insecure && strings.HasPrefix(strings.ToLower(cfg.URL), "ldap://") && !cfg.StartTLS {
		s.Warnf("insecure", "passwords cross the network to the directory in the clear; use ldaps:// or start_tls = true")
	}
	s.Record(cfg.Validate())
	return cfg.WithDefaults(), s.Report().ErrorCount() == before
}
