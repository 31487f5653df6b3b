package main

import (
	"fmt"
	"strings"
)

// runCompletion prints a shell completion script: `backupweb completion
// bash`, to be sourced or installed as
// /usr/share/bash-completion/completions/backupweb. The words come from the
// command table, so the script cannot fall behind the commands.
func runCompletion(c *cli, args []string) int {
	fs := c.flagSet("completion")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() != 1 || fs.Arg(0) != "bash" {
		fmt.Fprintln(c.stderr, "backupweb completion: want one argument, the shell: bash")
		return exitUsage
	}
	var names []string
	var cases strings.Builder
	for _, cmd := range commands() {
		names = append(names, cmd.name)
		fmt.Fprintf(&cases, "\t%s) flags=%q ;;\n", cmd.name, strings.Join(flagsOf(cmd.name), " "))
	}
	fmt.Fprintf(c.stdout, bashCompletion, strings.Join(names, " "), cases.String())
	return exitOK
}

// flagsOf lists the words that may follow a subcommand: its flags as
// "-name" and, for user and completion, their first argument. A test
// compares the flags with what each command's -h prints.
func flagsOf(name string) []string {
	switch name {
	case "serve":
		return []string{"-config", "-listen", "-log-format", "-log-level"}
	case "check-config":
		return []string{"-config", "-as-service", "-as-user", "-explain"}
	case "access":
		return []string{"-config", "-user", "-method", "-path", "-host", "-groups", "-second-factor"}
	case "hash-password":
		return []string{"-cost"}
	case "user":
		return []string{"add", "passwd", "del", "list", "totp", "recovery-codes", "factors", "-file", "-config", "-cost", "-owner", "-factors", "-issuer", "-remove", "-reset", "-reset-factors", "-tokens", "-keep-tokens"}
	case "session":
		return []string{"list", "revoke", "-config", "-user"}
	case "rotate-secret":
		return []string{"-config"}
	case "state":
		return []string{"import", "export", "-config"}
	case "token":
		return []string{"add", "list", "revoke", "-file", "-tokens", "-label", "-expires", "-read-only", "-path", "-config"}
	case "verify":
		return []string{"-config"}
	case "healthcheck":
		return []string{"-url", "-timeout"}
	case "completion":
		return []string{"bash"}
	}
	return nil
}

const bashCompletion = `# bash completion for backupweb (made by: backupweb completion bash)
_backupweb() {
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
	if [ "$COMP_CWORD" -eq 1 ]; then
		COMPREPLY=($(compgen -W "%s -version --version" -- "$cur"))
		return
	fi
	case "$prev" in
	-config|-file|-factors) COMPREPLY=($(compgen -f -- "$cur")); return ;;
	-owner) COMPREPLY=($(compgen -u -- "$cur")); return ;;
	-as-user) COMPREPLY=($(compgen -u -- "$cur")); return ;;
	-log-format) COMPREPLY=($(compgen -W "text json" -- "$cur")); return ;;
	-log-level) COMPREPLY=($(compgen -W "debug info warn error" -- "$cur")); return ;;
	-method) COMPREPLY=($(compgen -W "GET HEAD POST PUT PATCH DELETE OPTIONS" -- "$cur")); return ;;
	esac
	local flags=""
	case "${COMP_WORDS[1]}" in
%s	esac
	COMPREPLY=($(compgen -W "$flags" -- "$cur"))
}
complete -o default -F _backupweb backupweb
`
