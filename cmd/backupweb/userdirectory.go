package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/backupweb/backupweb/internal/auth/login"
	"github.com/backupweb/backupweb/internal/config"
	"github.com/backupweb/backupweb/internal/directory"
)

// isDirectoryConfig reports whether the configuration at path signs users
// in against a directory ([authentication] users = ldap): its users, and
// the names their tokens and factors are kept under, are the directory's.
func isDirectoryConfig(c *cli, path string) bool {
	cfg := config.Load(path, c.lookupEnv)
	return strings.EqualFold(strings.TrimSpace(cfg.Auth.String("users", "")), login.UsersFromDirectory)
}

// directoryLookupTime bounds the commands' one question to the directory.
const directoryLookupTime = 30 * time.Second

// directoryName asks the directory of lc (users = ldap) for the one entry
// of name, as the service account, and returns the name as the directory
// spells it: the name the service keys the user's second factors, tokens
// and sessions by. No entry, several entries, and a directory that does
// not answer are errors that say which. A disabled or locked account is
// an error when mustBeEnabled, else a note on standard error.
func directoryName(c *cli, lc login.Config, name string, mustBeEnabled bool) (string, error) {
	d, err := directory.New(lc.Directory)
	if err != nil {
		return "", err
	}
	defer d.Close()
	ctx, cancel := context.WithTimeout(c.ctx, directoryLookupTime)
	defer cancel()
	e, disabled, err := d.Resolve(ctx, name)
	switch {
	case errors.Is(err, directory.ErrNoEntry), errors.Is(err, directory.ErrSeveral):
		return "", fmt.Errorf("no directory user %q: %w", name, err)
	case err != nil:
		return "", fmt.Errorf("asking the directory about %q: %w", name, err)
	case disabled && mustBeEnabled:
		return "", fmt.Errorf("directory user %q is disabled or locked there; their tokens would be refused", e.Name)
	}
	if disabled {
		fmt.Fprintf(c.stderr, "note: directory user %q is disabled or locked there\n", e.Name)
	}
	if e.Name != name {
		fmt.Fprintf(c.stderr, "note: the directory spells the user %q; acting on %q\n", e.Name, e.Name)
	}
	return e.Name, nil
}

// directoryUserAction checks `user ACTION -config F` where F has
// users = ldap, and sets ua.name to the directory's spelling. Passwords
// are the directory's: plain passwd is refused, passwd -reset-factors
// removes the second factors (and tokens, and sessions) and leaves the
// password alone; del is refused (the directory removes users).
func directoryUserAction(c *cli, ua *userArgs, lc login.Config) error {
	switch {
	case ua.file != "":
		return fmt.Errorf("-file: %s has users = ldap: there is no user file; give -config alone", ua.config)
	case ua.action == "passwd" && !ua.fa.resetFactors:
		return fmt.Errorf("%s has users = ldap: passwords are the directory's; change it there (ldappasswd, or the directory's own tools). To remove the user's second factors, tokens and sessions, run `backupweb user passwd -config %s -reset-factors %s`", ua.config, ua.config, ua.name)
	case ua.action == "del":
		return fmt.Errorf("%s has users = ldap: users are the directory's; remove or disable the user there, then `backupweb user factors -config %s -reset %s` removes their second factors and sessions", ua.config, ua.config, ua.name)
	}
	name, err := directoryName(c, lc, ua.name, false)
	if err != nil {
		return err
	}
	ua.name, ua.directory = name, true
	return nil
}

// directoryPasswd is `user passwd -config F -reset-factors NAME` with
// users = ldap: the password stays the directory's (nothing is changed
// there); the user's tokens end (unless -keep-tokens), their second
// factors are removed, and their sessions end.
func directoryPasswd(c *cli, ua userArgs) error {
	fmt.Fprintf(c.stderr, "the password of %q is the directory's and was not changed; change it there\n", ua.name)
	fs, err := openFactorState(c, &ua, nil)
	if err != nil {
		return err
	}
	defer fs.done()
	if !ua.keepTokens {
		n, err := fs.store.RevokeTokensOf(c.ctx, ua.name)
		if err != nil {
			return fmt.Errorf("the user's tokens were not ended: %w", err)
		}
		fmt.Fprintf(c.stderr, "ended %d token%s of user %q\n", n, plural(n), ua.name)
	}
	if err := factorsReset(c, ua, fs); err != nil {
		return fmt.Errorf("the user's second factors were not removed: %w", err)
	}
	return nil
}
