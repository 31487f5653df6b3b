package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/backupweb/backupweb/internal/factors"
	"github.com/backupweb/backupweb/internal/userstate"
)

// passwdFactors ends `user passwd`: it says on standard error which second
// factors the user has in the factors file (-factors, default the user
// file's path + .factors) and, with -reset-factors, removes them all, as
// `user factors -reset` does. A password changed because it was stolen
// is not enough when the thief added a factor of their own (a passkey
// that signs in alone): the administrator sees it here. Neither needs
// BACKUP_SECRET_KEY: nothing is decrypted.
func passwdFactors(c *cli, ua userArgs) error {
	path := ua.factorsPath()
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintf(c.stderr, "user %q has no second factor (%s does not exist)\n", ua.name, path)
		return nil
	}
	set, readErr := factors.Read(path, nil)
	rec, st := set.Lookup(ua.name)
	had := describeFactors(rec)
	if st == factors.Broken {
		had = fmt.Sprintf("a record that cannot be read (%v)", readErr)
	}
	if !ua.fa.resetFactors {
		switch {
		case st == factors.None && had == "":
			fmt.Fprintf(c.stderr, "user %q has no second factor in %s\n", ua.name, path)
		default:
			fmt.Fprintf(c.stderr, "user %q keeps these second factors in %s: %s; if any is not theirs, remove them all with -reset-factors\n", ua.name, path, had)
		}
		return nil
	}
	found := false
	err := factors.Edit(path, nil, func(d *factors.Doc) error {
		found = d.Delete(ua.name)
		return nil
	})
	if err != nil {
		return fmt.Errorf("the password was changed, but the second factors were not removed: %w", err)
	}
	if !found {
		fmt.Fprintf(c.stderr, "user %q had no second factor in %s\n", ua.name, path)
		return nil
	}
	fmt.Fprintf(c.stderr, "removed every second factor of user %q from %s (%s); a running service ends their sessions made with one\n", ua.name, path, had)
	return nil
}

// passwdState ends `user passwd -config F`: where that configuration
// keeps its state (files or Redis), the user's tokens end (unless
// -keep-tokens), and their second factors are named or, with
// -reset-factors, removed, as passwdFactors does for files.
func passwdState(c *cli, ua userArgs) error {
	fs, err := openFactorState(c, &ua, nil)
	if err != nil {
		return fmt.Errorf("the password was changed, but its state cannot be reached: %w", err)
	}
	defer fs.done()
	if !ua.keepTokens {
		n, err := fs.store.RevokeTokensOf(c.ctx, ua.name)
		if err != nil {
			return fmt.Errorf("the password was changed, but the user's tokens were not ended: %w", err)
		}
		if n > 0 {
			fmt.Fprintf(c.stderr, "ended %d token%s of user %q\n", n, plural(n), ua.name)
		}
	}
	rec, err := fs.store.Factors(c.ctx, ua.name)
	had := describeFactors(rec)
	if errors.Is(err, userstate.ErrBroken) {
		had = fmt.Sprintf("a record that cannot be read (%v)", err)
	} else if err != nil {
		return fmt.Errorf("the password was changed, but the second factors cannot be read: %w", err)
	}
	if !ua.fa.resetFactors {
		if had == "" {
			fmt.Fprintf(c.stderr, "user %q has no second factor in %s\n", ua.name, fs.where)
		} else {
			fmt.Fprintf(c.stderr, "user %q keeps these second factors in %s: %s; if any is not theirs, remove them all with -reset-factors\n", ua.name, fs.where, had)
		}
		return nil
	}
	found, err := fs.store.ResetFactors(c.ctx, ua.name)
	if err != nil {
		return fmt.Errorf("the password was changed, but the second factors were not removed: %w", err)
	}
	if !found {
		fmt.Fprintf(c.stderr, "user %q had no second factor in %s\n", ua.name, fs.where)
		return nil
	}
	fmt.Fprintf(c.stderr, "removed every second factor of user %q from %s (%s); every running instance ends their sessions made with one\n", ua.name, fs.where, had)
	return nil
}

// delState ends `user del -config F`'s part in the configuration's
// state: the user's tokens and every second factor of theirs, broken
// record included, where F keeps them (files or Redis).
func delState(c *cli, ua userArgs) error {
	fs, err := openFactorState(c, &ua, nil)
	if err != nil {
		return fmt.Errorf("nothing was removed: %w", err)
	}
	defer fs.done()
	n, err := fs.store.RevokeTokensOf(c.ctx, ua.name)
	if err != nil {
		return fmt.Errorf("nothing was removed: the user's tokens were not ended: %w", err)
	}
	fmt.Fprintf(c.stderr, "ended %d token%s of user %q in %s\n", n, plural(n), ua.name, fs.where)
	found, err := fs.store.ResetFactors(c.ctx, ua.name)
	if err != nil {
		return fmt.Errorf("the user's tokens were ended, but their second factors were not removed (the user is still in %s): %w", ua.file, err)
	}
	if found {
		fmt.Fprintf(c.stderr, "removed every second factor of user %q from %s\n", ua.name, fs.where)
	}
	return nil
}

// describeFactors names what rec holds, secrets aside: "TOTP, passkeys
// Laptop and Phone, 8 recovery codes"; "" for nothing.
func describeFactors(rec *factors.Record) string {
	if rec == nil {
		return ""
	}
	var parts []string
	if rec.TOTP != nil {
		parts = append(parts, "TOTP")
	}
	if n := len(rec.Passkeys); n > 0 {
		names := make([]string, n)
		for i, p := range rec.Passkeys {
			names[i] = fmt.Sprintf("%q", p.Name)
		}
		parts = append(parts, fmt.Sprintf("%d passkey%s (%s)", n, plural(n), strings.Join(names, ", ")))
	}
	if n := len(rec.Recovery); n > 0 {
		parts = append(parts, fmt.Sprintf("%d recovery code%s", n, plural(n)))
	}
	return strings.Join(parts, ", ")
}

// plural is "s" unless n is 1.
func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
