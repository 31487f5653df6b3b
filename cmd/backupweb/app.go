package main

import (
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/backupweb/backupweb/internal/app"
	"github.com/backupweb/backupweb/internal/ini"
)

// options are the options of app.Check and app.Open for this run: the
// environment, the logger, and the files of the Debian package.
func (c *cli) options(listen string, log *slog.Logger) app.Options {
	return app.Options{Listen: listen, Logger: log, LookupEnv: c.lookupEnv,
		Packaged: app.Packaged{Config: packagedConfig, KeyFile: packagedKeyFile}, ACMERenewBefore: acmeRenewBefore}
}

// acmeRenewBefore is how long before its end an ACME certificate is
// ordered again (zero: the default); tests shorten it.
var acmeRenewBefore time.Duration

// printProblems writes every problem, one a line, each starting "error:"
// or "warning:", and returns how many were errors.
func printProblems(w io.Writer, rep *ini.Report) (errs int) {
	for _, p := range rep.Problems() {
		fmt.Fprintln(w, p.String())
		if p.Severity == ini.Error {
			errs++
		}
	}
	return errs
}

// logWarnings sends the warnings of rep to log, one line each.
func logWarnings(log *slog.Logger, rep *ini.Report) {
	for _, p := range rep.Problems() {
		if p.Severity == ini.Warning {
			log.Warn("config: " + strings.TrimPrefix(p.String(), "warning: "))
		}
	}
}

// Paths of the Debian package (packaging/): the configuration it installs,
// the environment file holding BACKUP_SECRET_KEY that it makes once and
// that the unit loads with EnvironmentFile=, and the user the unit runs as.
// Variables so that tests can point them at a temporary folder.
var (
	packagedConfig  = "/etc/backupweb/backupweb.ini"
	packagedKeyFile = "/etc/backupweb/env"
)

// serviceUser is the account the packaged unit runs as (User=backupweb):
// what check-config -as-service checks access for, and whose group a user
// file made in a folder of that group is given. A variable so that tests
// can name an account that exists on the machine running them.
var serviceUser = "backupweb"

// newLogger returns the program's logger on w: text lines, or JSON lines
// when format is "json", at level and above (debug, info, warn, error).
func newLogger(w io.Writer, format, level string) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil || strings.ContainsAny(level, "+-") {
		return nil, fmt.Errorf("unknown log level %q (use debug, info, warn or error)", level)
	}
	opts := &slog.HandlerOptions{Level: lv}
	switch format {
	case "", "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	default:
		return nil, fmt.Errorf("unknown log format %q (use text or json)", format)
	}
}
