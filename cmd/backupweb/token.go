package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/backupweb/backupweb/internal/app"
	"github.com/backupweb/backupweb/internal/auth/login"
	"github.com/backupweb/backupweb/internal/config"
	"github.com/backupweb/backupweb/internal/directory"
	"github.com/backupweb/backupweb/internal/tokens"
	"github.com/backupweb/backupweb/internal/userfile"
	"github.com/backupweb/backupweb/internal/userstate"
)

// tokenArgs is a parsed `backupweb token` command line.
type tokenArgs struct {
	action   string
	file     string // the user file
	tokens   string // the tokens file; default: the service's (userState)
	label    string
	expires  time.Duration
	readOnly bool
	path     string
	arg      string // the user name (add, list) or the token id (revoke)
	config   string // revoke: the service's configuration, for its Redis
	// dir is the configuration's [authentication] when it has
	// users = ldap (set by tokenState): names are the directory's.
	dir *login.Config
}

// tokenUsageText is the help of `backupweb token`.
const tokenUsageText = `Usage: backupweb token ACTION (-config F | -file USERS [-tokens PATH]) ...

Actions:
  add    [-label TEXT] [-expires DURATION] [-read-only] [-path PREFIX] NAME
         make a token for user NAME and print it once on standard output
  list   [NAME]   print id, user, label, created, expires, last used, scope
  revoke ID       remove the token with that id; with -config naming
                  store = redis, every instance refuses it at once

Flags:
  -config F        the service's configuration: act where it keeps tokens
                   (its tokens_file, or Redis with store = redis); with
                   users = ldap, NAME is looked up in the directory and the
                   token kept under the directory's spelling of it
  -file USERS      the user file of the users the tokens act as (without -config)
  -tokens PATH     the tokens file (tokens_file; default: that of the service
                   whose configuration names USERS, ./backupweb.ini or
                   /etc/backupweb/backupweb.ini: state_dir/tokens; when none
                   names it, -file USERS + .tokens)
  -label TEXT      what the token is for, shown by list and on the account page
  -expires D       lifetime: 90d, 720h... (default: none)
  -read-only       allow GET and HEAD only
  -path PREFIX     allow only paths under PREFIX (/backups/db/)
`

// runToken implements `backupweb token add|list|revoke`, which manages the
// machine tokens of the users of a flask-login user file.
func runToken(c *cli, args []string) int {
	ta, code, ok := parseTokenArgs(c, args)
	if !ok {
		return code
	}
	err := c.tokensFileOf(&ta)
	switch {
	case err != nil:
	case ta.action == "add":
		err = tokenAdd(c, ta)
	case ta.action == "list":
		err = tokenList(c, ta)
	case ta.action == "revoke":
		err = tokenRevoke(c, ta)
	}
	if err != nil {
		fmt.Fprintln(c.stderr, "backupweb token "+ta.action+": "+err.Error())
		return exitError
	}
	c.giveToFolderOwner(ta.tokens)
	return exitOK
}

// tokensFileOf sets ta.tokens, when neither -tokens nor -config did, to
// the tokens file of the service that uses the user file (userState),
// moved into its state folder first when it is still at its old default
// place.
func (c *cli) tokensFileOf(ta *tokenArgs) error {
	if ta.tokens != "" {
		return nil
	}
	if ta.config != "" && isDirectoryConfig(c, ta.config) {
		if ta.file != "" {
			return fmt.Errorf("-file: %s has users = ldap: there is no user file; give -config alone", ta.config)
		}
		return nil // tokenState opens where it keeps tokens, with the secret key
	}
	if ta.config != "" {
		a := app.Check(ta.config, c.options("", slog.New(slog.DiscardHandler)))
		if a.Config != nil && a.Config.Server.Store == config.StoreRedis {
			return nil // tokenState opens Redis, with the secret key
		}
		if sf, ok := a.StateFiles(); ok && ta.file == "" {
			ta.file = sf.UsersFile
		}
	}
	sf, err := c.userState(ta.file, ta.config)
	if err != nil {
		return err
	}
	// A tokens file: no secret key is needed to act in it.
	ta.tokens, ta.config = sf.Tokens.Path, ""
	return c.prepareState(sf.Tokens)
}

// parseTokenArgs reads the action, flags and argument. When it returns
// false, the command must stop with the returned exit code.
func parseTokenArgs(c *cli, args []string) (tokenArgs, int, bool) {
	var ta tokenArgs
	if len(args) == 0 {
		fmt.Fprint(c.stderr, tokenUsageText)
		return ta, exitUsage, false
	}
	ta.action, args = args[0], args[1:]
	switch ta.action {
	case "-h", "-help", "--help", "help":
		fmt.Fprint(c.stderr, tokenUsageText)
		return ta, exitOK, false
	case "add", "list", "revoke":
	default:
		fmt.Fprintf(c.stderr, "backupweb token: unknown action %q\n\n%s", ta.action, tokenUsageText)
		return ta, exitUsage, false
	}
	prefix := "backupweb token " + ta.action + ": "
	flags := c.flagSet("token " + ta.action)
	flags.Usage = func() { fmt.Fprint(c.stderr, tokenUsageText) }
	flags.StringVar(&ta.file, "file", "", "the user file (required)")
	flags.StringVar(&ta.tokens, "tokens", "", "the tokens file (default: the service's, in its state_dir; see -file)")
	flags.StringVar(&ta.label, "label", "", "add: what the token is for")
	expires := flags.String("expires", "", "add: lifetime (90d, 720h)")
	flags.BoolVar(&ta.readOnly, "read-only", false, "add: GET and HEAD only")
	flags.StringVar(&ta.path, "path", "", "add: only paths under this prefix")
	flags.StringVar(&ta.config, "config", "", "the service's configuration: act where it keeps tokens (its tokens_file, or Redis with store = redis)")
	var rest []string
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		rest, args = []string{args[0]}, args[1:]
	}
	if code, ok := parseFlags(flags, args); !ok {
		return ta, code, false
	}
	rest = append(rest, flags.Args()...)
	usageErr := func(msg string) (tokenArgs, int, bool) {
		fmt.Fprintln(c.stderr, prefix+msg)
		return ta, exitUsage, false
	}
	if ta.file == "" && ta.config == "" {
		return usageErr("-file USERS or -config F is required")
	}
	if ta.config != "" && ta.tokens != "" {
		return usageErr("-tokens and -config exclude each other: the configuration names its tokens_file")
	}
	if ta.action != "add" && (ta.label != "" || *expires != "" || ta.readOnly || ta.path != "") {
		return usageErr("-label, -expires, -read-only and -path apply to add only")
	}
	switch {
	case len(rest) > 1:
		return usageErr("takes one argument")
	case len(rest) == 0 && ta.action == "add":
		return usageErr("a user name is required")
	case len(rest) == 0 && ta.action == "revoke":
		return usageErr("a token id is required (see token list)")
	case len(rest) == 1:
		ta.arg = rest[0]
	}
	if *expires != "" {
		d, err := tokens.ParseDuration(*expires)
		if err != nil {
			return usageErr(err.Error())
		}
		ta.expires = d
	}
	if ta.path != "" {
		if err := tokens.CheckPath(ta.path); err != nil {
			return usageErr("-path: " + err.Error())
		}
	}
	if err := tokens.CheckLabel(ta.label); err != nil {
		return usageErr("-label: " + err.Error())
	}
	return ta, exitOK, true
}

// tokenState opens where ta's tokens are kept: with -config, where that
// configuration keeps them (its tokens file, or Redis with store =
// redis); otherwise the tokens file of -file (-tokens).
func tokenState(c *cli, ta *tokenArgs) (userstate.Store, string, func(), error) {
	if ta.config == "" {
		quiet := slog.New(slog.DiscardHandler)
		return userstate.NewFileStore(nil, tokens.Open(ta.tokens, quiet, nil), nil), ta.tokens, func() {}, nil
	}
	us, err := app.OpenUserState(ta.config, c.lookupEnv, slog.New(slog.NewTextHandler(c.stderr, nil)))
	if err != nil {
		return nil, "", nil, err
	}
	if us.Login.UsersFrom == login.UsersFromDirectory {
		lc := us.Login
		ta.dir = &lc
	} else if ta.file == "" {
		ta.file = us.Login.UsersFile
	}
	where := us.Login.TokensFile
	if us.Files == nil {
		where = us.Where
	}
	return us.Store, where, us.Close, nil
}

// tokenAdd makes a token for an existing user and prints it once.
func tokenAdd(c *cli, ta tokenArgs) error {
	store, where, done, err := tokenState(c, &ta)
	if err != nil {
		return err
	}
	defer done()
	if ta.dir != nil {
		if ta.arg, err = directoryName(c, *ta.dir, ta.arg, true); err != nil {
			return err
		}
	} else if err := fileHasUser(ta.file, ta.arg); err != nil {
		return err
	}
	t := &tokens.Token{User: ta.arg, Label: ta.label, ReadOnly: ta.readOnly, Path: ta.path}
	now := time.Now()
	secret, err := tokens.New(t, now)
	if err != nil {
		return err
	}
	if ta.expires > 0 {
		t.Expires = t.Created.Add(ta.expires)
	}
	if err := store.AddToken(c.ctx, *t); err != nil {
		return err
	}
	fmt.Fprintln(c.stdout, secret)
	fmt.Fprintf(c.stderr, "added token %s for user %q to %s; it is shown only this once\n", t.ID, t.User, where)
	return nil
}

// tokenList prints the tokens, of one user when a name is given.
func tokenList(c *cli, ta tokenArgs) error {
	if ta.config == "" {
		list, err := tokens.Read(ta.tokens)
		if err != nil {
			return err
		}
		printTokens(c.stdout, list, ta.arg)
		return nil
	}
	store, _, done, err := tokenState(c, &ta)
	if err != nil {
		return err
	}
	defer done()
	if ta.dir != nil && ta.arg != "" {
		// The directory's spelling; a user it no longer has may still
		// have tokens, listed under the name as given.
		name, err := directoryName(c, *ta.dir, ta.arg, false)
		switch {
		case errors.Is(err, directory.ErrNoEntry):
			fmt.Fprintf(c.stderr, "note: %v\n", err)
		case err != nil:
			return err
		default:
			ta.arg = name
		}
	}
	all, err := store.AllTokens(c.ctx)
	if err != nil {
		return err
	}
	list := make([]*tokens.Token, len(all))
	for i := range all {
		list[i] = &all[i]
	}
	printTokens(c.stdout, list, ta.arg)
	return nil
}

// printTokens writes list (of user, or all when user is empty) as a table.
func printTokens(w io.Writer, list []*tokens.Token, user string) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tUSER\tLABEL\tCREATED\tEXPIRES\tLAST USED\tSCOPE")
	for _, t := range list {
		if user != "" && t.User != user {
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", t.ID, t.User, orDash(t.Label), stamp(t.Created, "-"),
			stamp(t.Expires, "never"), stamp(t.LastUsed, "never"), scopeText(t.Scope()))
	}
	tw.Flush()
}

// tokenRevoke removes one token by id; with -config naming store =
// redis, every instance refuses it at its next request.
func tokenRevoke(c *cli, ta tokenArgs) error {
	store, where, done, err := tokenState(c, &ta)
	if err != nil {
		return err
	}
	defer done()
	gone, err := store.RevokeToken(c.ctx, "", ta.arg)
	if errors.Is(err, tokens.ErrNoToken) {
		return fmt.Errorf("no token with id %q in %s", ta.arg, where)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(c.stderr, "revoked token %s of user %q in %s\n", gone.ID, gone.User, where)
	return nil
}

// fileHasUser checks that the user file at path has user.
func fileHasUser(path, user string) error {
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("no user %q: %s does not exist", user, path)
	}
	doc, err := userfile.Load(path)
	if err != nil {
		return err
	}
	if !doc.Has(user) {
		return fmt.Errorf("no user %q in %s", user, path)
	}
	return nil
}

// stamp writes t in RFC 3339 (UTC), or none when t is zero.
func stamp(t time.Time, none string) string {
	if t.IsZero() {
		return none
	}
	return t.UTC().Format(time.RFC3339)
}

// orDash returns s, or "-" when it is empty.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// scopeText says what a token may do.
func scopeText(s tokens.Scope) string {
	var parts []string
	if s.ReadOnly {
		parts = append(parts, "read-only")
	}
	if s.Path != "" {
		parts = append(parts, "path="+s.Path)
	}
	if len(parts) == 0 {
		return "all"
	}
	return strings.Join(parts, ",")
}

// endTokens removes every token of user from the tokens file at path
// (user del, user passwd) and says how many were removed.
func endTokens(c *cli, path, user string) error {
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	var gone []*tokens.Token
	if err := tokens.Edit(path, func(d *tokens.Doc) error { gone = d.RevokeUser(user); return nil }); err != nil {
		return err
	}
	if len(gone) > 0 {
		fmt.Fprintf(c.stderr, "revoked the %d token(s) of user %q in %s\n", len(gone), user, path)
	}
	return nil
}
