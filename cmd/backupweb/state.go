package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"

	"github.com/backupweb/backupweb/internal/app"
	"github.com/backupweb/backupweb/internal/factors"
	"github.com/backupweb/backupweb/internal/tokens"
	"github.com/backupweb/backupweb/internal/userstate"
)

// stateUsageText is the help of `backupweb state`.
const stateUsageText = `Usage: backupweb state import|export -config F

  import   copy the factors file and the tokens file the configuration
           names (factors_file, tokens_file) into its Redis (store = redis);
           run it again and it copies nothing twice; prints what it copied
  export   write every user's second factors and tokens from Redis into
           those files again (a backup, or a move back to store = file)

Both need BACKUP_SECRET_KEY, the service's secret key.
`

// stateFlagsText lists the flags of `backupweb state`.
const stateFlagsText = `
Flags:
  -config F   the service's configuration (required)
`

// runState implements `backupweb state import|export -config F`.
func runState(c *cli, args []string) int {
	if len(args) == 0 || args[0] != "import" && args[0] != "export" {
		fmt.Fprint(c.stderr, stateUsageText+stateFlagsText)
		if len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help" || args[0] == "help") {
			return exitOK
		}
		return exitUsage
	}
	action := args[0]
	flags := c.flagSet("state " + action)
	flags.Usage = func() { fmt.Fprint(c.stderr, stateUsageText+stateFlagsText) }
	config := flags.String("config", "", "the service's configuration (required)")
	if code, ok := parseFlags(flags, args[1:]); !ok {
		return code
	}
	if *config == "" || flags.NArg() > 0 {
		fmt.Fprintln(c.stderr, "backupweb state "+action+": -config F is required and nothing else")
		return exitUsage
	}
	us, err := app.OpenUserState(*config, c.lookupEnv, slog.New(slog.NewTextHandler(c.stderr, nil)))
	if err == nil && us.Files != nil {
		us.Close()
		err = errors.New("the configuration keeps its state in files (store = file): there is nothing to copy")
	}
	if err == nil {
		defer us.Close()
		if action == "import" {
			err = stateImport(c, us)
		} else {
			err = stateExport(c, us)
		}
	}
	if err != nil {
		fmt.Fprintln(c.stderr, "backupweb state "+action+": "+err.Error())
		return exitError
	}
	return exitOK
}

// stateImport copies the factors file and the tokens file into Redis. A
// record already there as in the file is left alone; one that differs is
// replaced by the file's (a passkey's stored sign count is kept when it
// is higher); a token already there is not added again. A user whose
// line in the factors file cannot be used, or a tokens file that does
// not parse, stops it before anything is written.
func stateImport(c *cli, us *app.UserState) error {
	set, err := factors.Read(us.Login.FactorsFile, us.Keys)
	if err != nil {
		return fmt.Errorf("%w (fix the line, or reset the user's factors, then import again)", err)
	}
	list, err := tokens.Read(us.Login.TokensFile)
	if err != nil {
		return err
	}
	copied, same := 0, 0
	for _, user := range set.Users() {
		want, _ := set.Lookup(user)
		changed := false
		err := us.Store.EditFactors(c.ctx, user, func(rec *factors.Record) error {
			a, _ := json.Marshal(rec)
			b, _ := json.Marshal(want)
			if changed = string(a) != string(b); !changed {
				return userstate.ErrUnchanged
			}
			*rec = *want.Clone()
			return nil
		})
		if err != nil {
			return fmt.Errorf("copying the factors of %s: %w", user, err)
		}
		if changed {
			copied++
		} else {
			same++
		}
	}
	there, err := us.Store.AllTokens(c.ctx)
	if err != nil {
		return err
	}
	added, present := 0, 0
	for _, t := range list {
		if slices.ContainsFunc(there, func(o tokens.Token) bool { return o.ID == t.ID }) {
			present++
			continue
		}
		if err := us.Store.AddToken(c.ctx, *t); err != nil {
			return fmt.Errorf("copying token %s: %w", t.ID, err)
		}
		added++
	}
	fmt.Fprintf(c.stdout, "factors: %d copied, %d already there\ntokens: %d copied, %d already there\n", copied, same, added, present)
	return nil
}

// stateExport writes every user's factors and every token from Redis
// into the files the configuration names, replacing those users' lines
// and the tokens file's tokens.
func stateExport(c *cli, us *app.UserState) error {
	users, err := us.Store.Users(c.ctx)
	if err != nil {
		return err
	}
	var recs []*factors.Record
	for _, user := range users {
		rec, err := us.Store.Factors(c.ctx, user)
		if err != nil {
			return fmt.Errorf("reading the factors of %s: %w", user, err)
		}
		if rec != nil {
			recs = append(recs, rec)
		}
	}
	all, err := us.Store.AllTokens(c.ctx)
	if err != nil {
		return err
	}
	// The files' folder (state_dir by default) is made as the service
	// makes it.
	for _, f := range []string{us.Login.FactorsFile, us.Login.TokensFile} {
		if err := os.MkdirAll(filepath.Dir(f), 0o700); err != nil {
			return err
		}
	}
	err = factors.Edit(us.Login.FactorsFile, us.Keys, func(d *factors.Doc) error {
		for _, rec := range recs {
			d.Delete(rec.User)
			if err := d.Put(rec); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	err = tokens.Edit(us.Login.TokensFile, func(d *tokens.Doc) error {
		d.List = d.List[:0]
		for i := range all {
			d.Add(&all[i])
		}
		return nil
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(c.stdout, "factors: %d users written to %s\ntokens: %d written to %s\n", len(recs), us.Login.FactorsFile, len(all), us.Login.TokensFile)
	return nil
}
