package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/backupweb/backupweb/internal/app"
	"github.com/backupweb/backupweb/internal/auth/login"
	"github.com/backupweb/backupweb/internal/fspath"
	"github.com/backupweb/backupweb/internal/password"
	"github.com/backupweb/backupweb/internal/userfile"
)

// userActions describes the actions of `backupweb user`, in help order.
var userActions = []struct{ name, args, summary string }{
	{"add", "-file PATH [-owner USER] USERNAME", "add a user; the password is read like hash-password reads it"},
	{"passwd", "-file PATH|-config F [-reset-factors] [-keep-tokens] USERNAME", "set a new password; ends their tokens, says which second factors the user has, -reset-factors removes them (users = ldap: -reset-factors only; the password stays the directory's)"},
	{"del", "-file PATH|-config F USERNAME", "remove a user and their tokens (-config: their factors and sessions too)"},
	{"list", "-file PATH", "print the user names, one a line"},
	{"totp", "-file PATH [-remove] USERNAME", "enrol TOTP: print the otpauth:// URI, read one code to confirm"},
	{"recovery-codes", "-file PATH USERNAME", "print ten new single-use recovery codes, replacing the old ones"},
	{"factors", "-file PATH [-reset] USERNAME", "show the user's second factors; -reset removes them all"},
}

// userArgs is a parsed `backupweb user` command line.
type userArgs struct {
	action string
	file   string
	name   string
	cost   int
	owner  string // -owner: the owner of a file add creates
	fa     factorArgs
	// config is -config: the service's configuration, whose state
	// (files or Redis) the factor actions and passwd act on.
	config string
	// tokens is the tokens file whose tokens of the user passwd and del
	// end; keepTokens (-keep-tokens) keeps them on passwd.
	tokens     string
	keepTokens bool
	// directory: the -config names users = ldap, and name is the
	// directory's spelling of the user's name.
	directory bool
}

// runUser implements `backupweb user add|passwd|del|list -file PATH
// [USERNAME]`, which manages the user file of the flask-login type.
//
// The action comes first, then the flags, then the user name (the name may
// also come right after the action). Flags: -file (required) and -cost, the
// bcrypt cost of new hashes (default 12, the recommended cost; lower values
// only make sense in tests), and for add -owner, the owner a new file is
// given. New files get mode 0600, owned by the service user when root
// makes them in its folder (see newUserFile); every change rewrites the file
// atomically, keeps its owner, group and mode, and leaves the lines it
// does not touch as they were (see userfile.Doc). `add` refuses an existing name, `passwd` and `del` a
// missing one. After a change, problems the login provider would report
// with use_bcrypt on are printed as warnings.
func runUser(c *cli, args []string) int {
	ua, code, ok := parseUserArgs(c, args)
	if !ok {
		return code
	}
	prefix := "backupweb user " + ua.action + ": "
	err := c.usersFileOf(&ua)
	if err == nil {
		err = c.userStateOf(&ua)
	}
	switch {
	case err != nil:
	case ua.action == "list":
		err = userList(c, ua)
	case ua.action == "add":
		err = userAdd(c, ua)
	case ua.action == "passwd" && ua.directory:
		err = directoryPasswd(c, ua)
	case ua.action == "passwd":
		err = userPasswd(c, ua)
	case ua.action == "del":
		err = userDel(c, ua)
	default:
		err = runFactorAction(c, ua)
	}
	if err != nil {
		fmt.Fprintln(c.stderr, prefix+err.Error())
		return exitError
	}
	c.giveToFolderOwner(ua.tokens)
	c.giveToFolderOwner(ua.fa.factorsFile)
	if ua.action != "list" && !isFactorAction(ua.action) && !ua.directory {
		warnUserFile(c, prefix, ua.file)
	}
	return exitOK
}

// parseUserArgs reads the action, flags and name. When it returns false,
// the command must stop with the returned exit code.
func parseUserArgs(c *cli, args []string) (userArgs, int, bool) {
	var ua userArgs
	if len(args) == 0 {
		userUsage(c.stderr)
		return ua, exitUsage, false
	}
	ua.action, args = args[0], args[1:]
	switch ua.action {
	case "-h", "-help", "--help", "help":
		userUsage(c.stderr)
		return ua, exitOK, false
	case "add", "passwd", "del", "list", "totp", "recovery-codes", "factors":
	default:
		if strings.HasPrefix(ua.action, "-") {
			fmt.Fprint(c.stderr, "backupweb user: the action (add, passwd, del or list) comes first\n\n")
		} else {
			fmt.Fprintf(c.stderr, "backupweb user: unknown action %q\n\n", ua.action)
		}
		userUsage(c.stderr)
		return ua, exitUsage, false
	}
	prefix := "backupweb user " + ua.action + ": "
	flags := c.flagSet("user " + ua.action)
	flags.Usage = func() { userUsage(c.stderr) }
	flags.StringVar(&ua.file, "file", "", "path of the user file (required unless -config)")
	flags.StringVar(&ua.config, "config", "", "passwd, del, totp, recovery-codes, factors: the service's configuration; act where it keeps second factors, tokens and sessions (its files, or Redis with store = redis)")
	flags.IntVar(&ua.cost, "cost", password.Cost, "bcrypt cost of new password hashes; lower it only for tests")
	flags.StringVar(&ua.owner, "owner", "", "add, as root: the owner of a new file (mode 0600); default: see docs/authentication.md, \"The user file\"")
	flags.StringVar(&ua.fa.factorsFile, "factors", "", "passwd, totp, recovery-codes, factors: the factors file (factors_file); default: the service's, in its state_dir")
	flags.StringVar(&ua.fa.issuer, "issuer", "backupweb", "totp: the service's name as authenticator apps show it")
	flags.BoolVar(&ua.fa.remove, "remove", false, "totp: remove the user's TOTP secret")
	flags.BoolVar(&ua.fa.reset, "reset", false, "factors: remove every second factor of the user")
	flags.BoolVar(&ua.fa.resetFactors, "reset-factors", false, "passwd: also remove every second factor of the user")
	flags.StringVar(&ua.tokens, "tokens", "", "passwd, del: the tokens file (tokens_file); default: the service's, in its state_dir")
	flags.BoolVar(&ua.keepTokens, "keep-tokens", false, "passwd: keep the user's machine tokens")
	var names []string
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		names, args = []string{args[0]}, args[1:] // the name before the flags
	}
	if code, ok := parseFlags(flags, args); !ok {
		return ua, code, false
	}
	names = append(names, flags.Args()...)
	usageErr := func(msg string) (userArgs, int, bool) {
		fmt.Fprintln(c.stderr, prefix+msg)
		return ua, exitUsage, false
	}
	switch {
	case ua.file == "" && ua.config == "":
		return usageErr("-file PATH is required")
	case ua.config != "" && !isFactorAction(ua.action) && ua.action != "passwd" && ua.action != "del":
		return usageErr("-config applies to passwd, del, totp, recovery-codes and factors only")
	case ua.config != "" && (ua.fa.factorsFile != "" || ua.tokens != ""):
		return usageErr("-factors and -tokens exclude -config: the configuration names its files")
	case ua.fa.remove && ua.action != "totp", ua.fa.reset && ua.action != "factors":
		return usageErr("-remove applies to totp only, -reset to factors only")
	case ua.fa.resetFactors && ua.action != "passwd":
		return usageErr("-reset-factors applies to passwd only (to remove the factors alone: factors -reset)")
	case ua.fa.factorsFile != "" && !isFactorAction(ua.action) && ua.action != "passwd":
		return usageErr("-factors applies to passwd, totp, recovery-codes and factors only")
	case ua.keepTokens && ua.action != "passwd":
		return usageErr("-keep-tokens applies to passwd only")
	case ua.owner != "" && ua.action != "add":
		return usageErr("-owner applies to add only, which may create the file; an existing file keeps its owner (use chown)")
	case ua.action == "list" && len(names) > 0:
		return usageErr("takes no user name")
	case ua.action == "list":
		return ua, exitOK, true
	case len(names) == 0:
		return usageErr("a user name is required")
	case len(names) > 1:
		return usageErr("takes one user name")
	}
	ua.name = names[0]
	if err := userfile.ValidName(ua.name); err != nil {
		return usageErr(err.Error())
	}
	if err := checkCost(ua.cost); err != nil {
		return usageErr(err.Error())
	}
	return ua, exitOK, true
}

// userUsage prints the help of `backupweb user`.
func userUsage(w io.Writer) {
	fmt.Fprintln(w, "Usage: backupweb user ACTION -file PATH [-config F] [-cost N] [-owner USER] [-factors PATH] [-issuer NAME] [-remove] [-reset] [-reset-factors] [-tokens PATH] [-keep-tokens] [USERNAME]")
	fmt.Fprintln(w, "\nActions:")
	for _, a := range userActions {
		fmt.Fprintf(w, "  %-14s %-30s %s\n", a.name, a.args, a.summary)
	}
	fmt.Fprintf(w, "\nFlags:\n  -file PATH  the user file; every change keeps its owner, group and mode\n"+
		"  -config F   passwd, del, totp, recovery-codes, factors: the service's configuration; act where it\n"+
		"              keeps second factors, tokens and sessions (its files, or Redis with store = redis);\n"+
		"              its users_file is the user file unless -file names it too\n"+
		"  -cost N     bcrypt cost of new hashes, %d to %d (default %d)\n"+
		"  -owner USER add, as root: a new file is owned by USER, so a service run as USER reads it\n"+
		"  -factors PATH passwd, totp, recovery-codes, factors: the factors file (default: the service's: see below);\n"+
		"              these actions need BACKUP_SECRET_KEY, the service's secret key\n"+
		"  -issuer NAME totp: the service's name as authenticator apps show it (default backupweb)\n"+
		"  -tokens PATH passwd, del: the tokens file (default: the service's: see below)\n"+
		"  -keep-tokens passwd: keep the user's machine tokens (passwd and del end them otherwise)\n"+
		"  -remove     totp: remove the user's TOTP secret (and, without passkeys, their recovery codes)\n"+
		"  -reset      factors: remove every second factor of the user (an administrator's reset)\n"+
		"  -reset-factors passwd: remove every second factor of the user too; without it passwd\n"+
		"              only says which the user has (on standard error), and they stay\n"+
		"\nadd creates a missing file with mode 0600; as root, in a folder that belongs to the\n"+
		"group of the service user %s, the file is owned by that user.\n"+
		"\nThe factors and tokens files are those of the service whose configuration\n"+
		"(./backupweb.ini, else /etc/backupweb/backupweb.ini) names -file PATH as\n"+
		"users_file: factors_file and tokens_file, by default state_dir/factors and\n"+
		"state_dir/tokens; when none names it, -file PATH + .factors and .tokens.\n",
		password.MinCost, password.MaxCost, password.Cost, serviceUser)
}

// userList prints the names of the users in the file, one a line.
func userList(c *cli, ua userArgs) error {
	if _, err := os.Stat(ua.file); errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s does not exist", ua.file)
	}
	doc, err := userfile.Load(ua.file)
	if err != nil {
		return err
	}
	for _, name := range doc.Names() {
		fmt.Fprintln(c.stdout, name)
	}
	return nil
}

// userAdd adds a user, creating the file if needed. The name is checked
// before the password is asked for.
func userAdd(c *cli, ua userArgs) error {
	if dir := filepath.Dir(ua.file); dir != "" {
		if info, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("the folder %s does not exist; create it first (mkdir -p %s), or name a file in a folder that exists", fspath.Show(dir), dir)
		} else if err == nil && !info.IsDir() {
			return fmt.Errorf("%s is not a folder", fspath.Show(dir))
		}
	}
	doc, err := userfile.Load(ua.file)
	if err != nil {
		return err
	}
	if doc.Has(ua.name) {
		return fmt.Errorf("user %q already exists in %s (use passwd to change its password)", ua.name, ua.file)
	}
	nf, note, err := newUserFile(ua.file, ua.owner)
	if err != nil {
		return err
	}
	hash, err := c.newHash(ua.cost)
	if err != nil {
		return err
	}
	if err := doc.Add(ua.name, hash); err != nil {
		return err
	}
	if err := doc.SaveWith(ua.file, nf); err != nil {
		return err
	}
	if note != "" {
		fmt.Fprintln(c.stderr, note)
	}
	fmt.Fprintf(c.stderr, "added user %q to %s\n", ua.name, ua.file)
	return nil
}

// userPasswd sets a new password for an existing user, then says which
// second factors they have and, with -reset-factors, removes them
// (passwdFactors).
func userPasswd(c *cli, ua userArgs) error {
	doc, err := loadWithUser(ua)
	if err != nil {
		return err
	}
	hash, err := c.newHash(ua.cost)
	if err != nil {
		return err
	}
	if err := doc.Set(ua.name, hash); err != nil {
		return err
	}
	if err := doc.Save(ua.file); err != nil {
		return err
	}
	fmt.Fprintf(c.stderr, "changed the password of user %q in %s\n", ua.name, ua.file)
	if ua.config != "" {
		if err := passwdState(c, ua); err != nil {
			return err
		}
		// The other instances' copies of the user file keep the old
		// line until they are distributed again: the sessions end
		// everywhere now.
		if err := endUserSessions(c, ua.config, ua.name); err != nil {
			return fmt.Errorf("the password was changed, but the user's sessions were not ended: %w", err)
		}
		return nil
	}
	if !ua.keepTokens {
		if err := endTokens(c, ua.tokens, ua.name); err != nil {
			return err
		}
	}
	return passwdFactors(c, ua)
}

// userDel removes a user. With -config, their records go first from
// where that configuration keeps them (tokens and second factors, in its
// files or in Redis), so that a failure there leaves the user as they
// were, then their line, then every session of theirs ends
// (endUserSessions): the other instances' copies of the user file may
// name them until they are distributed again.
func userDel(c *cli, ua userArgs) error {
	doc, err := loadWithUser(ua)
	if err != nil {
		return err
	}
	if ua.config != "" {
		if err := delState(c, ua); err != nil {
			return err
		}
	}
	if err := doc.Delete(ua.name); err != nil {
		return err
	}
	if err := doc.Save(ua.file); err != nil {
		return err
	}
	fmt.Fprintf(c.stderr, "removed user %q from %s\n", ua.name, ua.file)
	if ua.config != "" {
		if err := endUserSessions(c, ua.config, ua.name); err != nil {
			return fmt.Errorf("the user was removed, but their sessions were not ended: %w", err)
		}
	} else if err := endTokens(c, ua.tokens, ua.name); err != nil {
		return err
	}
	if len(doc.Names()) == 0 {
		fmt.Fprintf(c.stderr, "warning: %s has no users left: nobody will be able to log in, and a running backupweb ends every session when it reads the file (add one with `backupweb user add -file %s NAME`)\n", ua.file, ua.file)
	}
	return nil
}

// userStateOf sets, for the actions that touch them, the tokens file
// (passwd, del) and the factors file (passwd and the factor actions) that
// -tokens and -factors did not set, to those of the service that uses the
// user file (userState), each moved into its state folder first when it is
// still at its old default place.
func (c *cli) userStateOf(ua *userArgs) error {
	if ua.config != "" {
		return nil // the configuration names where its state is
	}
	needTokens := (ua.action == "passwd" || ua.action == "del") && ua.tokens == ""
	needFactors := (ua.action == "passwd" || isFactorAction(ua.action)) && ua.fa.factorsFile == ""
	if !needTokens && !needFactors {
		return nil
	}
	sf, err := c.userState(ua.file, "")
	if err != nil {
		return err
	}
	if needTokens {
		ua.tokens = sf.Tokens.Path
		if err := c.prepareState(sf.Tokens); err != nil {
			return err
		}
	}
	if needFactors {
		ua.fa.factorsFile = sf.Factors.Path
		if err := c.prepareState(sf.Factors); err != nil {
			return err
		}
	}
	return nil
}

// usersFileOf sets, with -config, the user file the command works on:
// the configuration's users_file when -file is not given; both given,
// they must name the same file.
func (c *cli) usersFileOf(ua *userArgs) error {
	if ua.config == "" || isFactorAction(ua.action) {
		return nil // the factor actions read it with their state
	}
	us, err := app.OpenUserState(ua.config, c.lookupEnv, slog.New(slog.DiscardHandler))
	if err != nil {
		return err
	}
	defer us.Close()
	switch {
	case us.Login.UsersFrom == login.UsersFromDirectory:
		return directoryUserAction(c, ua, us.Login)
	case us.Login.UsersFile == "":
		return fmt.Errorf("%s names no users_file", ua.config)
	case ua.file == "":
		ua.file = us.Login.UsersFile
	case !sameFile(ua.file, us.Login.UsersFile):
		return fmt.Errorf("-file %s is not the users_file of %s (%s); give one of them", ua.file, ua.config, us.Login.UsersFile)
	}
	return nil
}

// loadWithUser loads the file and checks that it defines ua.name.
func loadWithUser(ua userArgs) (*userfile.Doc, error) {
	if _, err := os.Stat(ua.file); errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("no user %q: %s does not exist", ua.name, ua.file)
	}
	doc, err := userfile.Load(ua.file)
	if err != nil {
		return nil, err
	}
	if !doc.Has(ua.name) {
		return nil, fmt.Errorf("no user %q in %s", ua.name, ua.file)
	}
	return doc, nil
}

// warnUserFile prints, as warnings, what would stop the login provider
// (with use_bcrypt on) from reading the file, and access by other accounts.
func warnUserFile(c *cli, prefix, path string) {
	if fi, err := os.Stat(path); err == nil && fi.Mode().Perm()&0o007 != 0 {
		fmt.Fprintf(c.stderr, "%swarning: %s is open to every account on this machine (mode %04o); run chmod 600 or 640\n",
			prefix, path, fi.Mode().Perm())
	}
	if _, err := userfile.ParseFile(path, true); err != nil {
		for _, line := range strings.Split(err.Error(), "\n") {
			fmt.Fprintf(c.stderr, "%swarning: %s\n", prefix, line)
		}
	}
}
