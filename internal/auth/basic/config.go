package basic

import (
	"errors"
	"fmt"
	"strings"
	"unicode"

	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/password"
)

// Validate reports what makes c unusable, each problem a *auth.KeyError
// naming its key (errors.Join of them): a missing user name or password, a
// realm with control characters, a bcrypt hash with UseBcrypt off (the hash
// itself would be accepted as the password), a value that is not a bcrypt
// hash with UseBcrypt on. Messages never hold the password or hash. The
// program's loader records them at their keys; New returns them.
func (c Config) Validate() error {
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, &auth.KeyError{Key: key, Err: fmt.Errorf(format, args...)})
	}
	switch c.UsersFrom {
	case "", UsersFromConfig:
	case UsersFromDirectory:
		// Every user is the directory's: no user of the configuration.
		for _, k := range []struct{ key, value string }{{"username", c.Username}, {"password", c.Password}} {
			if k.value != "" {
				bad(k.key, "is not read with users = ldap: users and passwords are the directory's; remove one of the two")
			}
		}
		if strings.ContainsFunc(c.Realm, unicode.IsControl) {
			bad("realm", "must not contain control characters")
		}
		return errors.Join(errs...)
	default:
		bad("users", "unknown value %q; valid values are %s and %s", c.UsersFrom, UsersFromConfig, UsersFromDirectory)
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

// Warnings reports what is worth telling about a usable configuration,
// each an *auth.Warning of a *auth.KeyError naming its key: a password stored in plain text, a
// weak bcrypt cost. Messages never hold the password or hash.
func (c Config) Warnings() []error {
	if c.UsersFrom == UsersFromDirectory {
		return nil
	}
	if !c.UseBcrypt {
		return []error{&auth.Warning{Err: &auth.KeyError{Key: "password", Err: fmt.Errorf("is %s%s", password.PlainWarning("`backupweb hash-password`"), inlineCommentHint(c.Password))}}}
	}
	if cost, err := password.ParseHash(c.Password); err == nil {
		if w, weak := password.CostWarning(cost, "`backupweb hash-password`"); weak {
			return []error{&auth.Warning{Err: &auth.KeyError{Key: "password", Err: errors.New(w)}}}
		}
	}
	return nil
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
