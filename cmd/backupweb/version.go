package main

import (
	"fmt"

	"github.com/backupweb/backupweb/internal/buildinfo"
)

// runVersion prints "backupweb VERSION (revision, time, Go version)"; see
// package buildinfo for where each part comes from.
func runVersion(c *cli, args []string) int {
	fs := c.flagSet("version")
	if code, ok := parseNoArgs(c, fs, args); !ok {
		return code
	}
	fmt.Fprintln(c.stdout, "backupweb", buildinfo.Get())
	return exitOK
}
