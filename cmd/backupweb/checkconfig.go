package main

import (
	"fmt"
	"io"
	"log/slog"
)

// runCheckConfig loads and validates the configuration exactly as serve
// does, without listening, and prints every problem it finds.
func runCheckConfig(c *cli, args []string) int {
	fs := c.flagSet("check-config")
	path := fs.String("config", "", "configuration file (default ./backupweb.ini if present, else built-in defaults)")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintln(c.stderr, "backupweb check-config: unexpected arguments:", fs.Args())
		return exitUsage
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	a := c.load(*path, "", quiet, true)
	if printProblems(c.stderr, a.cfg.Report) > 0 || a.typeName == "" {
		fmt.Fprintln(c.stderr, "backupweb check-config: the configuration would not start")
		return exitError
	}
	fmt.Fprintf(c.stdout, "configuration ok: %s, authentication type %s\n", sourceName(a.cfg.Source), a.typeName)
	return exitOK
}

func sourceName(path string) string {
	if path == "" {
		return "built-in defaults"
	}
	return path
}
