package main

import (
	"fmt"

	"github.com/backupweb/backupweb/internal/buildinfo"
)

// runVersion prints "backupweb VERSION (revision, time, Go version)"; see
// package buildinfo for where each part comes from.
func runVersion(c *cli, args []string) int {
	fs := c.flagSet("version")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintln(c.stderr, "backupweb version: takes no arguments")
		return exitUsage
	}
	fmt.Fprintln(c.stdout, "backupweb", buildinfo.Get())
	return exitOK
}
