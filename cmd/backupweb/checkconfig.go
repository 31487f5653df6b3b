package main

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"time"

	"github.com/backupweb/backupweb/internal/app"
	"github.com/backupweb/backupweb/internal/config"
	"github.com/backupweb/backupweb/internal/fspath"
	"github.com/backupweb/backupweb/internal/tlscert"
)

// runCheckConfig loads and validates the configuration exactly as serve
// does, without listening, and prints every problem it finds.
//
// With -as-service (the packaged unit's user, backupweb) or -as-user NAME
// it also checks, from owners, groups and modes, that this account can
// read every file the configuration names and write its state folder:
// check-config run as root reads everything, the service does not.
// -as-service also takes the environment the packaged unit gives the
// service (its EnvironmentFile=, read as systemd reads it) instead of the
// shell's, so the key systemd loads is seen and a variable only the shell
// has is not.
func runCheckConfig(c *cli, args []string) int {
	fs := c.flagSet("check-config")
	path := configFlag(fs)
	asService := fs.Bool("as-service", false, "also check that the service user "+serviceUser+" (the packaged unit's User=) can read every file the configuration names and write its state folder")
	asUser := fs.String("as-user", "", "like -as-service, for the account NAME the service runs as")
	explain := fs.Bool("explain", false, "also list the effective access rules ([proxy] shorthand expanded, the default last) on standard output")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintln(c.stderr, "backupweb check-config: unexpected arguments:", fs.Args())
		return exitUsage
	}
	account := *asUser
	if *asService {
		if account != "" && account != serviceUser {
			fmt.Fprintf(c.stderr, "backupweb check-config: -as-service checks the user %s; -as-user names %s: give one of them\n", serviceUser, account)
			return exitUsage
		}
		account = serviceUser
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	opts := c.options("", quiet)
	if *asService {
		// The packaged unit's environment, not this shell's.
		env, err := unitEnv(packagedKeyFile)
		if err != nil {
			fmt.Fprintf(c.stderr, "backupweb check-config: -as-service reads the unit's environment file as systemd does, and cannot: %v (run it as root)\n", err)
			return exitError
		}
		opts.LookupEnv = serviceLookup(env)
	}
	a := app.Check(*path, opts)
	if account != "" {
		acct, err := lookupAccount(account)
		if err != nil {
			fmt.Fprintf(c.stderr, "backupweb check-config: cannot check the access of the service's account: %v (the Debian package creates the user %s; name another with -as-user)\n", err, serviceUser)
			return exitError
		}
		checkServiceAccess(a, acct, osStat)
	} else if os.Geteuid() == 0 {
		if _, err := user.Lookup(serviceUser); err == nil {
			a.Config.Report.Warnf("", 0, "", "", "run as root, check-config reads files the service user %s may not read; add -as-service to check its access", serviceUser)
		}
	}
	if *explain {
		explainRules(c.stdout, a.Config.Access.Rules)
	}
	if printProblems(c.stderr, a.Config.Report) > 0 || a.TypeName == "" {
		fmt.Fprintln(c.stderr, "backupweb check-config: the configuration would not start")
		return exitError
	}
	fmt.Fprintf(c.stdout, "configuration ok: %s, authentication type %s\n", sourceName(a.Config.Source), a.TypeName)
	if t := a.Config.Server.TLS; t.Leaf != nil {
		fmt.Fprintf(c.stdout, "https: %s covers %s; valid until %s\n", fspath.Show(t.CertFile), strings.Join(tlscert.Hosts(t.Leaf), ", "), t.Leaf.NotAfter.UTC().Format(time.RFC3339))
	}
	if ac := a.Config.Server.TLS.ACME; ac.On() {
		fmt.Fprintf(c.stdout, "https: certificates by ACME for %s from %s\n", strings.Join(ac.Domains, ", "), ac.CA)
	}
	if prev := app.PreviousSecret(opts.LookupEnv); prev != nil && a.Type.NeedsSecret {
		fmt.Fprintf(c.stdout, "secret key rotation: %s is set and accepted for reading what was made under it; run `backupweb rotate-secret`, then remove it\n", app.PreviousEnv)
	}
	return exitOK
}

func sourceName(path string) string {
	if path == "" {
		return "built-in defaults"
	}
	return path
}

// servicePath is a file or folder the service uses, and the key that
// names it ("" for the configuration file itself).
type servicePath struct {
	section, key, path string
	need               need
	// rewrites, when set, is the file the service rewrites in the folder
	// path: the service starts without it, and fails only when it saves
	// that file, so a problem is a warning.
	rewrites string
}

// servicePaths lists what the service will read or write with a's
// configuration.
func servicePaths(a *app.App) []servicePath {
	cfg, t := a.Config, a.Type // t is the zero Type when the type is unknown: no keys
	var ps []servicePath
	if cfg.Source != "" {
		ps = append(ps, servicePath{path: cfg.Source, need: readFile})
	}
	sf, _ := a.StateFiles()
	moving := map[string]app.StateFile{sf.Factors.Key: sf.Factors, sf.Tokens.Key: sf.Tokens}
	for _, f := range a.Files() {
		ps = append(ps, servicePath{section: app.Section, key: f.Key.Name, path: f.Path, need: readFile})
		if m, ok := moving[f.Key.Name]; ok && m.Pending() {
			// Still at its old default place: the service reads it there
			// once, to move it into state_dir.
			ps = append(ps, servicePath{section: app.Section, key: f.Key.Name, path: m.Old, need: readFile})
		}
		if f.Key.Kind == app.RewrittenFile {
			// Rewritten as a new copy renamed over it: its folder too.
			ps = append(ps, servicePath{section: app.Section, key: f.Key.Name, path: filepath.Dir(f.Path), need: writeDir, rewrites: f.Path})
		}
	}
	if cfg.Proxy.Upstream == nil && cfg.Backups.Dir != "" {
		ps = append(ps, servicePath{section: "backups", key: "dir", path: cfg.Backups.Dir, need: listDir})
	}
	if cfg.Server.Store == config.StoreRedis && cfg.Redis.TLSCA != "" {
		ps = append(ps, servicePath{section: "redis", key: "tls_ca", path: cfg.Redis.TLSCA, need: readFile})
	}
	if t := cfg.Server.TLS; t.CertFile != "" {
		ps = append(ps, servicePath{section: "server", key: "tls_cert", path: t.CertFile, need: readFile},
			servicePath{section: "server", key: "tls_key", path: t.KeyFile, need: readFile})
	}
	if ac := cfg.Server.TLS.ACME; ac.On() && ac.CARootFile != "" {
		ps = append(ps, servicePath{section: "server", key: "acme_ca_root", path: ac.CARootFile, need: readFile})
	}
	if cfg.UI.Icon != "" && cfg.UI.Icon != config.NoIcon {
		ps = append(ps, servicePath{section: "ui", key: "icon", path: cfg.UI.Icon, need: readFile})
	}
	if (t.NeedsSecret || cfg.Server.TLS.ACME.On()) && cfg.Server.Store != config.StoreRedis && cfg.Server.StateDir != "" {
		ps = append(ps, servicePath{section: "server", key: "state_dir", path: cfg.Server.StateDir, need: writeDir})
	}
	return ps
}

// checkServiceAccess records an error for every path of a that acct
// cannot use as the service must, and a warning when the packaged key file
// is unreadable to it (systemd reads that file as root for the unit, but a
// check run as the service user cannot load it).
func checkServiceAccess(a *app.App, acct account, stat statFunc) {
	cfg := a.Config
	for _, p := range servicePaths(a) {
		msg := accessProblem(acct, p.path, p.need, stat)
		switch {
		case msg == "":
		case p.rewrites != "":
			cfg.Report.Warnf(p.path, 0, p.section, p.key, "the service saves %s by writing a new copy into this folder, and will fail: %s", p.rewrites, msg)
		default:
			cfg.Report.Errorf(p.path, 0, p.section, p.key, "%s", msg)
		}
	}
	if (app.Packaged{KeyFile: packagedKeyFile}).KeyFileExists() {
		if msg := accessProblem(acct, packagedKeyFile, readFile, stat); msg != "" {
			cfg.Report.Warnf(packagedKeyFile, 0, "", "", "%s (systemd reads this file as root for the unit, so the service starts; a check run as %s cannot load the key)", msg, acct.name)
		}
	}
}
