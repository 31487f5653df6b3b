package basic

import (
	"strings"
	"time"
	"unicode"

	"github.com/backupweb/backupweb/config"
	"github.com/backupweb/backupweb/password"
)

// Keys are the [authentication] keys type basic reads, besides "type".
var Keys = []string{"username", "password", "use_bcrypt", "realm", "max_failures", "failure_window", "cache_ttl"}

// Load reads a Config from the [authentication] section. Problems (missing
// keys, a malformed hash, a realm with control characters) are recorded in
// the section's report with their key and line, and warnings for plain-text
// passwords and weak hashes too; ok is false when the configuration cannot
// be used. Problem messages never contain the password or hash.
func Load(s *config.Section) (cfg Config, ok bool) {
	before := s.Report().ErrorCount()
	cfg = Config{
		Username:      s.Require("username"),
		Password:      s.Require("password"),
		UseBcrypt:     s.Bool("use_bcrypt", false),
		Realm:         s.String("realm", DefaultRealm),
		MaxFailures:   s.Int("max_failures", 10, 1, 1_000_000),
		FailureWindow: s.Duration("failure_window", 15*time.Minute),
		CacheTTL:      s.Duration("cache_ttl", 5*time.Minute),
	}
	if strings.ContainsFunc(cfg.Realm, unicode.IsControl) {
		s.Errorf("realm", "must not contain control characters")
	}
	if cfg.Password != "" && !s.Report().HasErrorsAt(s.Name(), "password") {
		checkPassword(s, cfg)
	}
	return cfg, s.Report().ErrorCount() == before
}

func checkPassword(s *config.Section, cfg Config) {
	if !cfg.UseBcrypt {
		if password.IsBcrypt(cfg.Password) {
			// Compared as a plain password, the hash string itself would
			// be accepted: fail closed.
			s.Errorf("password", "is a bcrypt hash but use_bcrypt is off, so the hash itself would be accepted as the password; set use_bcrypt = True")
		} else {
			s.Warnf("password", "is stored in plain text; store a hash made by `backupweb hash-password` and set use_bcrypt = true%s", inlineCommentHint(cfg.Password))
		}
		return
	}
	cost, err := password.ParseHash(cfg.Password)
	if err != nil {
		s.Errorf("password", "%v%s", err, inlineCommentHint(cfg.Password))
		return
	}
	if cost < 10 {
		s.Warnf("password", "bcrypt cost %d is weak; the recommended cost is %d (`backupweb hash-password`)", cost, password.Cost)
	}
}

// inlineCommentHint explains a value that holds " #" or " ;": the file
// format has no inline comments, so text pasted after the value became part
// of it. It says so without quoting the value.
func inlineCommentHint(value string) string {
	if strings.Contains(value, " #") || strings.Contains(value, " ;") || strings.Contains(value, "\t#") || strings.Contains(value, "\t;") {
		return "; the value contains \" #\" or \" ;\", which looks like an inline comment, but comments must be on lines of their own: everything after = is part of the value"
	}
	return ""
}
