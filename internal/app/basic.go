package app

import (
	"fmt"

	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/auth/basic"
	"github.com/backupweb/backupweb/internal/ini"
)

// loadBasic reads a basic.Config from the [authentication] section (and
// [ldap], with users = ldap).
// Problems (missing keys, a malformed hash, a realm with control
// characters) are recorded in the section's report with their key and
// line, and warnings for plain-text passwords and weak hashes too; ok is
// false when the configuration cannot be used. Problem messages never
// contain the password or hash.
func loadBasic(s *ini.Section, env *loadEnv) (cfg basic.Config, ok bool) {
	before := s.Report().ErrorCount()
	cfg = basic.Config{
		UsersFrom:        readUsers(s),
		Username:         s.String("username", ""),
		Password:         s.String("password", ""),
		UseBcrypt:        s.Bool("use_bcrypt", false),
		Realm:            s.String("realm", ""),
		Throttling:       loadThrottling(s),
		MaxUserFailures:  s.Int("max_user_failures", 0, 1, 1_000_000),
		KnownAddressDays: s.Int("known_address_days", 0, 1, 36500),
		CacheTTL:         s.Duration("cache_ttl", 0),
	}.WithDefaults()
	if cfg.UsersFrom == basic.UsersFromDirectory {
		cfg.Directory, _ = loadDirectory(s, env.ldap) // its problems are counted in the report
	}
	s.Record(cfg.Validate())
	if s.Report().ErrorCount() == before {
		s.Record(cfg.Warnings()...)
	}
	return cfg, s.Report().ErrorCount() == before
}

// liveCredentials applies username, password and use_bcrypt to a running
// basic provider (a reload that rotates a leaked password): the three
// are read together, whichever of them changed, so that the provider
// never holds a password of one reload with the use_bcrypt of another.
func liveCredentials(p auth.Provider, s *ini.Section) error {
	bp, ok := p.(*basic.Provider)
	if !ok {
		return fmt.Errorf("not a basic provider")
	}
	return bp.SetCredentials(s.String("username", ""), s.String("password", ""), s.Bool("use_bcrypt", false))
}
