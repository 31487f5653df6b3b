package main

import (
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/backupweb/backupweb/access"
	"github.com/backupweb/backupweb/internal/app"
)

// noHost stands for "a host that no rule's host condition names": the
// access command's answer when -host is not given.
const noHost = "-"

// runAccess answers what the access rules decide for one request:
//
//	backupweb access -config F -user NAME -method M -path P [-host H] [-groups G1,G2] [-second-factor]
//
// It prints one line, "DECISION RULE": DECISION is the deciding rule's
// policy (allow, deny, anonymous, second_factor) or the default's (allow,
// deny), RULE is rule<N>, skip_auth_routes, allow_users or default. A
// refusal no single rule made (an ambiguous path, unknown groups) prints
// deny and the rule where the doubt arose, and says why on standard error.
// Exit 0 when it answered, 1 on a configuration error, 2 on wrong usage.
func runAccess(c *cli, args []string) int {
	fs := c.flagSet("access")
	path := fs.String("config", "", "configuration file (default ./backupweb.ini if present, else built-in defaults)")
	user := fs.String("user", "", "the signed-in user's name (required)")
	method := fs.String("method", "GET", "the request's method")
	reqPath := fs.String("path", "", "the request's path, as a client sends it (required; a query or fragment is ignored)")
	host := fs.String("host", "", "the host name the request is for (default: one that no host condition names)")
	groups := fs.String("groups", "", "the user's groups, comma-separated (default: from groups_file, none for oauth)")
	second := fs.Bool("second-factor", false, "the user signed in with a second factor")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	switch {
	case fs.NArg() > 0:
		fmt.Fprintln(c.stderr, "backupweb access: unexpected arguments:", fs.Args())
		return exitUsage
	case *user == "":
		fmt.Fprintln(c.stderr, "backupweb access: -user NAME is required")
		return exitUsage
	case !strings.HasPrefix(*reqPath, "/"):
		fmt.Fprintln(c.stderr, "backupweb access: -path must be a path starting with /, such as /admin/users")
		return exitUsage
	case strings.TrimSpace(*method) == "":
		fmt.Fprintln(c.stderr, "backupweb access: -method must name a method, such as GET or POST")
		return exitUsage
	}
	a := app.Check(*path, c.options("", slog.New(slog.NewTextHandler(io.Discard, nil))))
	if printProblems(c.stderr, a.Config.Report) > 0 || a.TypeName == "" {
		fmt.Fprintln(c.stderr, "backupweb access: the configuration would not start")
		return exitError
	}
	t := access.Target{Method: *method, URL: access.RequestURL(*reqPath), Host: *host}
	if t.Host == "" {
		t.Host = noHost
	}
	if t.URL == nil {
		fmt.Fprintln(c.stderr, "backupweb access: -path is not a path (it must start with a single /)")
		return exitUsage
	}
	rules := a.Config.Access.Rules
	if d := rules.Decide(t, access.Who{}); d.Policy == access.Anonymous {
		fmt.Fprintf(c.stdout, "%s %s\n", d.Policy, d.Rule)
		return exitOK
	}
	who := access.Who{SignedIn: true, Name: *user, GroupsKnown: true, SecondFactor: *second}
	switch {
	case *groups != "":
		for g := range strings.SplitSeq(*groups, ",") {
			if g = strings.TrimSpace(g); g != "" {
				who.Groups = append(who.Groups, g)
			}
		}
	case a.Groups != nil:
		who.Groups, who.GroupsKnown = a.Groups.GroupsOf(*user)
	}
	d := rules.Decide(t, who)
	fmt.Fprintf(c.stdout, "%s %s\n", d.Policy, d.Rule)
	switch d.Reason {
	case access.ReasonAmbiguous:
		fmt.Fprintln(c.stderr, "backupweb access: the path can be read several ways (dot segments, doubled or encoded slashes, backslashes, path parameters) and the rules do not decide them alike: refused")
	case access.ReasonGroupsUnknown:
		fmt.Fprintln(c.stderr, "backupweb access: the user's groups cannot be known (the groups file is broken) and this rule names groups: refused")
	}
	return exitOK
}

// explainRules writes the effective access rules, one a line, for
// check-config -explain.
func explainRules(w io.Writer, rules *access.Rules) {
	fmt.Fprintln(w, "access rules, in order (the first that names a request decides):")
	for _, line := range rules.Explain() {
		fmt.Fprintln(w, "  "+line)
	}
}
