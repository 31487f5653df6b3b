package basic

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/backupweb/backupweb/auth"
	"github.com/backupweb/backupweb/internal/ini"
	"github.com/backupweb/backupweb/password"
)

// Keys are the [authentication] keys type basic reads, besides "type".
var Keys = slices.Concat([]string{"username", "password", "use_bcrypt", "realm", "cache_ttl", "groups_file"}, auth.ThrottlingKeys)

// Load reads a Config from the [authentication] section. Problems (missing
// keys, a malformed hash, a realm with control characters) are recorded in
// the section's report with their key and line, and warnings for plain-text
// passwords and weak hashes too; ok is false when the configuration cannot
// be used. Problem messages never contain the password or hash.
func Load(s *ini.Section) (cfg Config, ok bool) {
	before := s.Report().ErrorCount()
	cfg = Config{
		Username:   s.String("username", ""),
		Password:   s.String("password", ""),
		UseBcrypt:  s.Bool("use_bcrypt", false),
		Realm:      s.String("realm", DefaultRealm),
		Throttling: auth.LoadThrottling(s),
		CacheTTL:   s.Duration("cache_ttl", DefaultCacheTTL),
	}
	s.Record(cfg.Validate())
	if s.Report().ErrorCount() == before {
		warnPassword(s, cfg)
	}
	return cfg, s.Report().ErrorCount() == before
}

// Validate reports what makes c unusable, each problem a *ini.KeyError
// naming its key (errors.Join of them): a missing user name or password, a
// realm with control characters, a bcrypt hash with UseBcrypt off (the hash
// itself would be accepted as the password), a value that is not a bcrypt
// hash with UseBcrypt on. Messages never hold the password or hash. Load
// records them at their keys; New returns them.
func (c Config) Validate() error {
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, &ini.KeyError{Key: key, Err: fmt.Errorf(format, args...)})
	}
	if c.Username == "" {
		bad("username", "missing required key; add a line \"username = ...\" under [authentication]")
	}
	switch {
	case c.Password == "":
		bad("password", "missing required key; add a line \"password = ...\" under [authentication] (a hash made by `backupweb hash-password`, with use_bcrypt = true)")
	case !c.UseBcrypt && password.IsBcrypt(c.Password):
		// Compared as a plain password, the hash string itself would be
		// accepted: fail closed.
		bad("password", "is a bcrypt hash but use_bcrypt is off, so the hash itself would be accepted as the password; set use_bcrypt = True")
	case c.UseBcrypt:
		if _, err := password.ParseHash(c.Password); err != nil {
			bad("password", "%v%s", err, inlineCommentHint(c.Password))
		}
	}
	if strings.ContainsFunc(c.Realm, unicode.IsControl) {
		bad("realm", "must not contain control characters")
	}
	return errors.Join(errs...)
}

// warnPassword records the warnings of a usable password: one stored in
// plain text, a weak bcrypt cost.
func warnPassword(s *ini.Section, cfg Config) {
	if !cfg.UseBcrypt {
		s.Warnf("password", "is %s%s", password.PlainWarning("`backupweb hash-password`"), inlineCommentHint(cfg.Password))
		return
	}
	if cost, err := password.ParseHash(cfg.Password); err == nil {
		if w, weak := password.CostWarning(cost, "`backupweb hash-password`"); weak {
			s.Warnf("password", "%s", w)
		}
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
