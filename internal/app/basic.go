package app

import (
	"github.com/backupweb/backupweb/internal/auth/basic"
	"github.com/backupweb/backupweb/internal/ini"
)

// loadBasic reads a basic.Config from the [authentication] section.
// Problems (missing keys, a malformed hash, a realm with control
// characters) are recorded in the section's report with their key and
// line, and warnings for plain-text passwords and weak hashes too; ok is
// false when the configuration cannot be used. Problem messages never
// contain the password or hash.
func loadBasic(s *ini.Section) (cfg basic.Config, ok bool) {
	before := s.Report().ErrorCount()
	cfg = basic.Config{
		Username:   s.String("username", ""),
		Password:   s.String("password", ""),
		UseBcrypt:  s.Bool("use_bcrypt", false),
		Realm:      s.String("realm", ""),
		Throttling: loadThrottling(s),
		CacheTTL:   s.Duration("cache_ttl", 0),
	}.WithDefaults()
	s.Record(cfg.Validate())
	if s.Report().ErrorCount() == before {
		s.Record(cfg.Warnings()...)
	}
	return cfg, s.Report().ErrorCount() == before
}
