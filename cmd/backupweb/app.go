package main

import (
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/backupweb/backupweb/auth"
	"github.com/backupweb/backupweb/auth/factory"
	"github.com/backupweb/backupweb/config"
)

// app is a loaded configuration with the provider it selects: everything
// serve needs before it listens, and everything check-config validates.
type app struct {
	cfg      *config.Config
	provider auth.Provider // nil when the configuration has errors
}

// load reads the configuration at path ("" for ./backupweb.ini or the
// built-in defaults), applies listen when it is not empty, and builds the
// authentication provider. With checkOnly the provider validates everything
// but acquires nothing (no state files are created). Problems, all of them,
// are in a.cfg.Report.
func (c *cli) load(path, listen string, log *slog.Logger, checkOnly bool) *app {
	cfg := config.Load(path, c.lookupEnv)
	if listen != "" {
		cfg.Server.Listen = listen
	}
	a := &app{cfg: cfg}
	env := auth.Env{Logger: log, StateDir: cfg.Server.StateDir, CheckOnly: checkOnly}
	p, err := factory.New(cfg.Auth, env, c.lookupEnv)
	if err == nil && !cfg.Report.HasErrors() {
		a.provider = p
	}
	return a
}

// printProblems writes every problem, one a line, each starting "error:"
// or "warning:", and returns how many were errors.
func printProblems(w io.Writer, rep *config.Report) (errs int) {
	for _, p := range rep.Problems() {
		fmt.Fprintln(w, p.String())
		if p.Severity == config.Error {
			errs++
		}
	}
	return errs
}

// logWarnings sends the warnings of rep to log, one line each.
func logWarnings(log *slog.Logger, rep *config.Report) {
	for _, p := range rep.Problems() {
		if p.Severity == config.Warning {
			log.Warn("config: " + strings.TrimPrefix(p.String(), "warning: "))
		}
	}
}

// newLogger returns the program's logger on w: text lines, or JSON lines
// when format is "json".
func newLogger(w io.Writer, format string) (*slog.Logger, error) {
	switch format {
	case "", "text":
		return slog.New(slog.NewTextHandler(w, nil)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, nil)), nil
	default:
		return nil, fmt.Errorf("unknown log format %q (use text or json)", format)
	}
}
