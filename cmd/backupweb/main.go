// Command backupweb runs the web interface of the backup service and the
// tools that go with it: password hashing, secret generation, user-file
// management and configuration checking.
//
// Exit codes: 0 success, 1 runtime or configuration error, 2 wrong usage.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// Exit codes shared by every subcommand.
const (
	exitOK    = 0
	exitError = 1
	exitUsage = 2
)

// cli carries what a subcommand may touch of the outside world, so tests can
// run subcommands in-process with their own streams and environment.
type cli struct {
	ctx    context.Context
	stdin  io.Reader // *os.File in production: prompts check for a terminal
	stdout io.Writer
	stderr io.Writer
	// lookupEnv reads an environment variable; os.LookupEnv in production.
	lookupEnv func(string) (string, bool)
}

// command is one subcommand of the program.
type command struct {
	name    string
	usage   string
	summary string
	run     func(c *cli, args []string) int
}

// commands lists the subcommands in the order the usage text shows them.
func commands() []command {
	return []command{
		{"serve", "serve [-config PATH] [-listen ADDR] [-log-format text|json] [-log-level LEVEL]", "run the web interface", runServe},
		{"check-config", "check-config [-config PATH] [-as-service | -as-user NAME] [-explain]", "validate the configuration without serving; -as-service: and the service user's access to its files; -explain: list the effective access rules", runCheckConfig},
		{"access", "access [-config PATH] -user NAME [-method M] -path P [-host H] [-groups G,...] [-second-factor]", "print what the access rules decide for one request: DECISION RULE", runAccess},
		{"hash-password", "hash-password [-cost N]", "read a password on standard input and print its bcrypt hash", runHashPassword},
		{"gen-secret", "gen-secret", "print a fresh secret key for BACKUP_SECRET_KEY", runGenSecret},
		{"user", "user add|passwd|del|list|totp|recovery-codes|factors -file PATH [-config F] [-cost N] [-owner USER] [-factors PATH] [-issuer NAME] [-remove] [-reset] [-reset-factors] [-tokens PATH] [-keep-tokens] [USERNAME]", "manage a user file and its users' second factors (-config: where the service keeps them, files or Redis)", runUser},
		{"token", "token add|list|revoke -file USERS [-config F] [-tokens PATH] [-label TEXT] [-expires DURATION] [-read-only] [-path PREFIX] [NAME|ID]", "manage the machine tokens of a user file's users (Authorization: Bearer)", runToken},
		{"state", "state import|export [-config F]", "copy the factors and tokens files into the configuration's Redis, or write them out again", runState},
		{"session", "session list|revoke -config F [-user NAME] [ID]", "list the signed-in sessions, or end one or all of a user's", runSession},
		{"rotate-secret", "rotate-secret -config F", "put every stored record under BACKUP_SECRET_KEY, read under it or BACKUP_SECRET_KEY_PREVIOUS, and print counts", runRotateSecret},
		{"verify", "verify [-config PATH] [PATH]", "read every backup below PATH that has a recorded SHA-256 and compare; exit 1 on any mismatch", runVerify},
		{"version", "version (also -version, --version)", "print the version, revision, build time and Go version", runVersion},
		{"healthcheck", "healthcheck [-url URL] [-timeout D]", "exit 0 when a running backupweb answers 200 (for container health checks)", runHealthcheck},
		{"completion", "completion bash", "print the bash completion script", runCompletion},
	}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	c := &cli{ctx: ctx, stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, lookupEnv: os.LookupEnv}
	tuneGC(os.LookupEnv)
	code := c.main(os.Args[1:])
	stop()
	os.Exit(code)
}

// main dispatches args to a subcommand and returns the exit code.
func (c *cli) main(args []string) int {
	if len(args) == 0 {
		c.usage()
		return exitUsage
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		c.usage()
		return exitOK
	case "-version", "--version":
		return runVersion(c, args[1:])
	}
	for _, cmd := range commands() {
		if cmd.name == args[0] {
			return cmd.run(c, args[1:])
		}
	}
	fmt.Fprintf(c.stderr, "backupweb: unknown command %q\n\n", args[0])
	c.usage()
	return exitUsage
}

func (c *cli) usage() {
	fmt.Fprintln(c.stderr, "Usage: backupweb COMMAND [FLAGS]")
	fmt.Fprintln(c.stderr, "\nCommands:")
	width := 0
	for _, cmd := range commands() {
		width = max(width, len(cmd.name))
	}
	for _, cmd := range commands() {
		fmt.Fprintf(c.stderr, "  %-*s  %s\n  %-*s  backupweb %s\n", width, cmd.name, cmd.summary, width, "", cmd.usage)
	}
	fmt.Fprintln(c.stderr, "\nbackupweb COMMAND -h lists the command's flags.")
}

// flagSet returns a FlagSet for a subcommand that writes its usage to
// stderr and reports errors instead of exiting.
func (c *cli) flagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet("backupweb "+name, flag.ContinueOnError)
	fs.SetOutput(c.stderr)
	return fs
}

// configFlag defines the -config flag that serve, check-config and access
// share.
func configFlag(fs *flag.FlagSet) *string {
	return fs.String("config", "", "configuration file (default ./backupweb.ini if present, else built-in defaults)")
}

// parseNoArgs parses args into fs for a command that takes flags only: a
// word left over is a usage error. It returns as parseFlags does.
func parseNoArgs(c *cli, fs *flag.FlagSet, args []string) (int, bool) {
	if code, ok := parseFlags(fs, args); !ok {
		return code, false
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(c.stderr, "%s: takes no arguments\n", fs.Name())
		return exitUsage, false
	}
	return exitOK, true
}

// parseFlags parses args into fs. It returns an exit code and false when the
// command must stop: exitOK for -h, exitUsage for bad flags.
func parseFlags(fs *flag.FlagSet, args []string) (int, bool) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK, false
		}
		return exitUsage, false
	}
	return exitOK, true
}
