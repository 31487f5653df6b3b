package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/backupweb/backupweb/internal/app"
	"github.com/backupweb/backupweb/internal/auth/login"
	"github.com/backupweb/backupweb/internal/directory"
	"github.com/backupweb/backupweb/internal/factors"
	"github.com/backupweb/backupweb/internal/qr"
	"github.com/backupweb/backupweb/internal/secretkey"
	"github.com/backupweb/backupweb/internal/userstate"
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

// factorState is where a factor action reads and writes: with -config,
// where that configuration keeps second factors (its factors file, or
// Redis with store = redis); otherwise the factors file of -factors
// (default: -file + .factors).
type factorState struct {
	// lc is the configuration's [authentication] (with -config).
	lc    login.Config
	store userstate.Store
	keys  *factors.Keys
	where string
	done  func()
}

// openFactorState opens ua's factor state. keys may be nil (for a reset
// or a listing in a file, which decrypt nothing); -config always needs
// the secret key.
func openFactorState(c *cli, ua *userArgs, keys *factors.Keys) (factorState, error) {
	if ua.config == "" {
		f := factors.Open(ua.factorsPath(), keys, slog.New(slog.DiscardHandler))
		return factorState{store: userstate.NewFileStore(f, nil, nil), keys: keys, where: ua.factorsPath(), done: func() {}}, nil
	}
	us, err := app.OpenUserState(ua.config, c.lookupEnv, slog.New(slog.NewTextHandler(c.stderr, nil)))
	if err != nil {
		return factorState{}, err
	}
	if ua.file == "" {
		ua.file = us.Login.UsersFile
	}
	where := us.Login.FactorsFile
	if us.Files == nil {
		where = us.Where
	}
	return factorState{lc: us.Login, store: us.Store, keys: us.Keys, where: where, done: us.Close}, nil
}

// runFactorAction runs totp, recovery-codes or factors for ua.
func runFactorAction(c *cli, ua userArgs) error {
	var keys *factors.Keys
	if ua.config == "" {
		var err error
		if keys, err = c.factorKeys(); err != nil {
			return err
		}
	}
	fs, err := openFactorState(c, &ua, keys)
	if err != nil {
		return err
	}
	defer fs.done()
	switch {
	case fs.lc.UsersFrom == login.UsersFromDirectory && ua.file != "":
		return fmt.Errorf("-file: %s has users = ldap: there is no user file; give -config alone", ua.config)
	case fs.lc.UsersFrom == login.UsersFromDirectory && !ua.directory:
		// The directory's spelling of the name; a user it no longer
		// has can still have their factors reset.
		name, err := directoryName(c, fs.lc, ua.name, false)
		if err != nil && !(ua.fa.reset && errors.Is(err, directory.ErrNoEntry)) {
			return err
		} else if err != nil {
			fmt.Fprintf(c.stderr, "note: %v; removing what is kept under %q\n", err, ua.name)
		} else {
			ua.name = name
		}
	case ua.directory:
	case ua.action != "factors" || !ua.fa.reset:
		if _, err := loadWithUser(ua); err != nil {
			return err
		}
	}
	switch {
	case ua.action == "totp" && ua.fa.remove:
		return totpRemove(c, ua, fs)
	case ua.action == "totp":
		return totpEnrol(c, ua, fs)
	case ua.action == "recovery-codes":
		return recoveryCodes(c, ua, fs)
	case ua.fa.reset:
		return factorsReset(c, ua, fs)
	default:
		return factorsShow(c, ua, fs)
	}
}

// totpEnrol makes a TOTP secret for the user, prints its otpauth:// URI on
// standard output (and its QR code on standard error when that is a
// terminal), reads one current code on standard input and stores the
// secret, sealed, only when the code is right.
func totpEnrol(c *cli, ua userArgs, fs factorState) error {
	rec, err := fs.store.Factors(c.ctx, ua.name)
	if errors.Is(err, userstate.ErrBroken) {
		return fmt.Errorf("the user's record in %s cannot be used (%v); reset it first with `backupweb user factors -reset %s`", fs.where, err, ua.name)
	} else if err != nil {
		return err
	} else if rec != nil && rec.TOTP != nil {
		return fmt.Errorf("user %q has TOTP already; remove it first with `backupweb user totp -remove %s`", ua.name, ua.name)
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
	recovery := 0
	err = fs.store.EditFactors(c.ctx, ua.name, func(rec *factors.Record) error {
		if rec.TOTP != nil {
			return fmt.Errorf("user %q was given TOTP meanwhile; nothing was stored", ua.name)
		}
		if len(rec.Handle) == 0 {
			rec.Handle = factors.NewHandle()
		}
		rec.TOTP = &factors.TOTP{Sealed: fs.keys.SealTOTP(ua.name, key.Secret()), Added: time.Now().UTC()}
		recovery = len(rec.Recovery)
		return nil
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(c.stderr, "enrolled TOTP for user %q in %s\n", ua.name, fs.where)
	if recovery == 0 {
		fmt.Fprintf(c.stderr, "the user has no recovery codes; make them with `backupweb user recovery-codes %s`\n", ua.name)
	}
	return nil
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
func totpRemove(c *cli, ua userArgs, fs factorState) error {
	err := fs.store.EditFactors(c.ctx, ua.name, func(rec *factors.Record) error {
		if rec.TOTP == nil {
			return fmt.Errorf("user %q has no TOTP in %s", ua.name, fs.where)
		}
		rec.TOTP = nil
		if len(rec.Passkeys) == 0 {
			rec.Recovery = nil
		}
		return nil
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(c.stderr, "removed TOTP of user %q from %s\n", ua.name, fs.where)
	return nil
}

// recoveryCodes makes ten new recovery codes for the user, replacing the
// old ones, and prints them on standard output, one a line.
func recoveryCodes(c *cli, ua userArgs, fs factorState) error {
	var codes []string
	err := fs.store.EditFactors(c.ctx, ua.name, func(rec *factors.Record) error {
		if len(rec.Handle) == 0 {
			rec.Handle = factors.NewHandle()
		}
		codes, rec.Recovery = fs.keys.NewRecoveryCodes(ua.name)
		return nil
	})
	if err != nil {
		return err
	}
	for _, code := range codes {
		fmt.Fprintln(c.stdout, code)
	}
	fmt.Fprintf(c.stderr, "made %d recovery codes for user %q in %s, replacing the previous ones; each works once, keep them safe\n", len(codes), ua.name, fs.where)
	return nil
}

// factorsShow prints what the store holds for the user, secrets aside.
func factorsShow(c *cli, ua userArgs, fs factorState) error {
	rec, err := fs.store.Factors(c.ctx, ua.name)
	if errors.Is(err, userstate.ErrBroken) {
		return fmt.Errorf("the user's record in %s cannot be used, so they cannot sign in: %v", fs.where, err)
	}
	if err != nil {
		return err
	}
	st := factors.None
	if rec.HasFactor() {
		st = factors.Enrolled
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
// what an administrator does for a user who lost their device (or whose
// account was taken over). With -config it then ends every session of the
// user where that configuration keeps sessions, those made with the
// password alone included (endUserSessions), whether or not they had a
// factor: a session that outlives the reset could enrol a factor of its
// own. With second_factor = required they enrol again at their next
// sign-in.
func factorsReset(c *cli, ua userArgs, fs factorState) error {
	found, err := fs.store.ResetFactors(c.ctx, ua.name)
	if err != nil {
		return err
	}
	if !found {
		fmt.Fprintf(c.stderr, "user %q had no factors in %s\n", ua.name, fs.where)
	} else {
		fmt.Fprintf(c.stderr, "removed every second factor of user %q from %s\n", ua.name, fs.where)
	}
	if ua.config == "" {
		fmt.Fprintf(c.stderr, "a running service ends their sessions made with a factor; to end the others too, run this with -config or `backupweb session revoke -config F -user %s`\n", ua.name)
		return nil
	}
	if err := endUserSessions(c, ua.config, ua.name); err != nil {
		return fmt.Errorf("the second factors were removed, but the user's sessions were not ended: %w", err)
	}
	return nil
}
