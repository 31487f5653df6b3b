package main

import (
	"fmt"
	"runtime/debug"
)

// version is set at build time with -ldflags "-X main.version=v1.2.3";
// otherwise the module version recorded by the Go toolchain is used.
var version = ""

func runVersion(c *cli, args []string) int {
	fs := c.flagSet("version")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintln(c.stderr, "backupweb version: takes no arguments")
		return exitUsage
	}
	fmt.Fprintln(c.stdout, "backupweb", versionString())
	return exitOK
}

func versionString() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "devel"
}
