package main

import (
	"fmt"

	"github.com/backupweb/backupweb/internal/password"
)

// runHashPassword implements `backupweb hash-password [-cost N]`: it reads
// a password (see readPassword) and prints its bcrypt hash and a newline on
// standard output, for the basic type's `password` key or a user file.
// The default cost is the recommended 12; -cost takes 4 to 31.
func runHashPassword(c *cli, args []string) int {
	const prefix = "backupweb hash-password: "
	fs := c.flagSet("hash-password")
	cost := fs.Int("cost", password.Cost, fmt.Sprintf("bcrypt cost, %d to %d", password.MinCost, password.MaxCost))
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintln(c.stderr, prefix+"takes no arguments; the password is read from standard input")
		return exitUsage
	}
	if err := checkCost(*cost); err != nil {
		fmt.Fprintln(c.stderr, prefix+err.Error())
		return exitUsage
	}
	hash, err := c.newHash(*cost)
	if err != nil {
		fmt.Fprintln(c.stderr, prefix+err.Error())
		return exitError
	}
	fmt.Fprintln(c.stdout, hash)
	return exitOK
}

// checkCost refuses a bcrypt cost outside password.MinCost..MaxCost.
func checkCost(cost int) error {
	if cost < password.MinCost || cost > password.MaxCost {
		return fmt.Errorf("-cost must be between %d and %d", password.MinCost, password.MaxCost)
	}
	return nil
}

// newHash reads a new password, confirmed on a terminal, and returns its
// bcrypt hash at cost. The password bytes are cleared once hashed.
func (c *cli) newHash(cost int) (string, error) {
	pw, err := c.readPassword(true)
	if err != nil {
		return "", err
	}
	defer clear(pw)
	return password.Hash(pw, cost)
}
