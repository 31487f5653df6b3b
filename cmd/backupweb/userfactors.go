package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/backupweb/backupweb/internal/app"
	"github.com/backupweb/backupweb/internal/factors"
	"github.com/backupweb/backupweb/internal/qr"
	"github.com/backupweb/backupweb/internal/secretkey"
)

// factorArgs are the flags of the second-factor actions of `backupweb
// user`: totp, recovery-codes and factors.
type factorArgs struct {
	factorsFile string // -factors: the factors file; default: the service's (userStateOf)
	issuer      string // -issuer: the name authenticator apps show
	remove      bool   // totp -remove
	reset       bool   // factors -reset
	// resetFactors is passwd -reset-factors.
	resetFactors bool
}

// isFactorAction reports whether action manages second factors.
func isFactorAction(action string) bool {
	return action == "totp" || action == "recovery-codes" || action == "factors"
}

// factorsPath returns the factors file the command works on: -factors,
// else the service's (set by userStateOf).
func (ua userArgs) factorsPath() string { return ua.fa.factorsFile }

// factorKeys derives the factors file's keys from BACKUP_SECRET_KEY, which
// must be the service's: a secret sealed under another key does not
// decrypt, and the service then refuses the user.
func (c *cli) factorKeys() (*factors.Keys, error) {
	v, ok := c.lookupEnv(app.SecretEnv)
	if !ok || v == "" {
		return nil, fmt.Errorf("%s is not set; set it to the service's secret key (the TOTP secret is encrypted with a key derived from it)", app.SecretEnv)
	}
	if len(v) < app.MinSecretLen {
		return nil, fmt.Errorf("%s is shorter than %d characters", app.SecretEnv, app.MinSecretLen)
	}
	k, err := secretkey.New([]byte(v), app.PreviousSecret(c.lookupEnv))
	if err != nil {
		return nil, err
	}
	return factors.NewKeyring(k)
}

// runFactorAction runs totp, recovery-codes or factors for ua.
func runFactorAction(c *cli, ua userArgs) error {
	if ua.action != "factors" || !ua.fa.reset {
		if _, err := loadWithUser(ua); err != nil {
			return err
		}
	}
	keys, err := c.factorKeys()
	if err != nil {
		return err
	}
	switch {
	case ua.action == "totp" && ua.fa.remove:
		return totpRemove(c, ua, keys)
	case ua.action == "totp":
		return totpEnrol(c, ua, keys)
	case ua.action == "recovery-codes":
		return recoveryCodes(c, ua, keys)
	case ua.fa.reset:
		return factorsReset(c, ua, keys)
	default:
		return factorsShow(c, ua, keys)
	}
}

// totpEnrol makes a TOTP secret for the user, prints its otpauth:// URI on
// standard output (and its QR code on standard error when that is a
// terminal), reads one current code on standard input and stores the
// secret, sealed, only when the code is right.
func totpEnrol(c *cli, ua userArgs, keys *factors.Keys) error {
	path := ua.factorsPath()
	set, err := factors.Read(path, keys)
	if rec, st := set.Lookup(ua.name); st == factors.Broken {
		return fmt.Errorf("the user's record in %s cannot be used (%v); reset it first with `backupweb user factors -reset -file %s %s`", path, err, ua.file, ua.name)
	} else if rec != nil && rec.TOTP != nil {
		return fmt.Errorf("user %q has TOTP already; remove it first with `backupweb user totp -remove -file %s %s`", ua.name, ua.file, ua.name)
	}
	key, err := factors.NewTOTPKey(ua.fa.issuer, ua.name)
	if err != nil {
		return err
	}
	fmt.Fprintln(c.stdout, key.URL())
	if f, ok := c.stderr.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		if m, err := qr.Matrix(key.URL()); err == nil {
			// Light modules are painted bright white on black, whatever
			// the terminal's own colours, so the code reads on light and
			// dark themes alike.
			for line := range strings.Lines(qr.HalfBlocks(m)) {
				fmt.Fprint(c.stderr, "\x1b[97;40m"+strings.TrimSuffix(line, "\n")+"\x1b[0m\n")
			}
		}
	}
	fmt.Fprint(c.stderr, "Scan the code (or add the secret) in an authenticator app, then enter the code it shows: ")
	code, err := readCode(c.stdin)
	if err != nil {
		return err
	}
	if _, ok := factors.CheckTOTP(key.Secret(), code, time.Now()); !ok {
		return errors.New("wrong code; nothing was stored (check the device's clock, then run the command again)")
	}
	err = factors.Edit(path, keys, func(d *factors.Doc) error {
		rec, err := d.GetOrNew(ua.name)
		if err != nil {
			return err
		}
		if rec.TOTP != nil {
			return fmt.Errorf("user %q was given TOTP meanwhile; nothing was stored", ua.name)
		}
		rec.TOTP = &factors.TOTP{Sealed: keys.SealTOTP(ua.name, key.Secret()), Added: time.Now().UTC()}
		return d.Put(rec)
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(c.stderr, "enrolled TOTP for user %q in %s\n", ua.name, path)
	if rec, _ := mustRead(path, keys).Lookup(ua.name); rec == nil || len(rec.Recovery) == 0 {
		fmt.Fprintf(c.stderr, "the user has no recovery codes; make them with `backupweb user recovery-codes -file %s %s`\n", ua.file, ua.name)
	}
	return nil
}

// mustRead reads the factors file, whatever its problems.
func mustRead(path string, keys *factors.Keys) *factors.Set {
	s, _ := factors.Read(path, keys)
	return s
}

// readCode reads one line from r: the code typed.
func readCode(r io.Reader) (string, error) {
	line, err := bufio.NewReader(io.LimitReader(r, 256)).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("reading the code from standard input: %w", err)
	}
	code := strings.Join(strings.Fields(line), "")
	if code == "" {
		return "", errors.New("no code on standard input; nothing was stored")
	}
	return code, nil
}

// totpRemove removes the user's TOTP secret. Their recovery codes go too
// when no passkey is left: they stand in for a factor the user no longer
// has.
func totpRemove(c *cli, ua userArgs, keys *factors.Keys) error {
	path := ua.factorsPath()
	err := factors.Edit(path, keys, func(d *factors.Doc) error {
		rec, err := d.Get(ua.name)
		if err != nil {
			return err
		}
		if rec == nil || rec.TOTP == nil {
			return fmt.Errorf("user %q has no TOTP in %s", ua.name, path)
		}
		rec.TOTP = nil
		if len(rec.Passkeys) == 0 {
			rec.Recovery = nil
		}
		return d.Put(rec)
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(c.stderr, "removed TOTP of user %q from %s\n", ua.name, path)
	return nil
}

// recoveryCodes makes ten new recovery codes for the user, replacing the
// old ones, and prints them on standard output, one a line.
func recoveryCodes(c *cli, ua userArgs, keys *factors.Keys) error {
	path := ua.factorsPath()
	var codes []string
	err := factors.Edit(path, keys, func(d *factors.Doc) error {
		rec, err := d.GetOrNew(ua.name)
		if err != nil {
			return err
		}
		codes, rec.Recovery = keys.NewRecoveryCodes(ua.name)
		return d.Put(rec)
	})
	if err != nil {
		return err
	}
	for _, code := range codes {
		fmt.Fprintln(c.stdout, code)
	}
	fmt.Fprintf(c.stderr, "made %d recovery codes for user %q in %s, replacing the previous ones; each works once, keep them safe\n", len(codes), ua.name, path)
	return nil
}

// factorsShow prints what the factors file holds for the user, secrets
// aside.
func factorsShow(c *cli, ua userArgs, keys *factors.Keys) error {
	path := ua.factorsPath()
	set, err := factors.Read(path, keys)
	rec, st := set.Lookup(ua.name)
	if st == factors.Broken {
		return fmt.Errorf("the user's record in %s cannot be used, so they cannot sign in: %v", path, err)
	}
	fmt.Fprintf(c.stdout, "status: %s\n", st)
	if rec == nil {
		return nil
	}
	if rec.TOTP != nil {
		fmt.Fprintf(c.stdout, "totp: enrolled %s\n", rec.TOTP.Added.UTC().Format(time.RFC3339))
	}
	fmt.Fprintf(c.stdout, "recovery codes left: %d\n", len(rec.Recovery))
	for _, p := range rec.Passkeys {
		fmt.Fprintf(c.stdout, "passkey: %s (added %s)\n", p.Name, p.Created.UTC().Format(time.RFC3339))
	}
	return nil
}

// factorsReset removes every factor of the user, broken record included:
// what an administrator does for a user who lost their device. With
// second_factor = required they enrol again at their next sign-in.
func factorsReset(c *cli, ua userArgs, keys *factors.Keys) error {
	path := ua.factorsPath()
	found := false
	err := factors.Edit(path, keys, func(d *factors.Doc) error {
		found = d.Delete(ua.name)
		return nil
	})
	if err != nil {
		return err
	}
	if !found {
		fmt.Fprintf(c.stderr, "user %q had no factors in %s\n", ua.name, path)
		return nil
	}
	fmt.Fprintf(c.stderr, "removed every second factor of user %q from %s; a running service ends their sessions when second_factor = required\n", ua.name, path)
	return nil
}
