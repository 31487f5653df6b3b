package main

import (
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"

	"github.com/backupweb/backupweb/internal/access"
	"github.com/backupweb/backupweb/internal/app"
	"github.com/backupweb/backupweb/internal/fspath"
	"github.com/backupweb/backupweb/internal/userfile"
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
// A user the configuration does not know is warned about there too (see
// unknownUser).
// Exit 0 when it answered, 1 on a configuration error, 2 on wrong usage.
func runAccess(c *cli, args []string) int {
	fs := c.flagSet("access")
	path := configFlag(fs)
	user := fs.String("user", "", "the signed-in user's name (required)")
	method := fs.String("method", "GET", "the request's method")
	reqPath := fs.String("path", "", "the request's target, as a client sends it: a path (//x is a path too) or an absolute http(s) URL (required; of the query, only _method counts; a fragment is ignored)")
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
	case strings.TrimSpace(*method) == "":
		fmt.Fprintln(c.stderr, "backupweb access: -method must name a method, such as GET or POST")
		return exitUsage
	}
	t, ok := accessTarget(c, *method, *reqPath, *host)
	if !ok {
		return exitUsage
	}
	a := app.Check(*path, c.options("", slog.New(slog.NewTextHandler(io.Discard, nil))))
	if printProblems(c.stderr, a.Config.Report) > 0 || a.TypeName == "" {
		fmt.Fprintln(c.stderr, "backupweb access: the configuration would not start")
		return exitError
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
	if note := unknownUser(a, *user); note != "" {
		fmt.Fprintln(c.stderr, "backupweb access: "+note)
	}
	switch d.Reason {
	case access.ReasonAmbiguous:
		fmt.Fprintln(c.stderr, "backupweb access: the path can be read several ways (dot segments, doubled or encoded slashes, backslashes, path parameters, %25, bytes that are not UTF-8, control characters, full-width dots, a trailing dot or space) and the rules do not decide them alike: refused")
	case access.ReasonGroupsUnknown:
		fmt.Fprintln(c.stderr, "backupweb access: the user's groups cannot be known (the groups file is broken) and this rule names groups: refused")
	}
	return exitOK
}

// unknownUser says, for standard error, when name is not a user the
// configured type could sign in: absent from the user file (users_file),
// not the one user (username), or not checked at all for a type with no
// list of users (oauth: the identity provider names them). The decision
// stands either way; the warning keeps a typo from reading as an answer.
func unknownUser(a *app.App, name string) string {
	if a.Type.AuthOff {
		return ""
	}
	for _, f := range a.Files() {
		if f.Key.Name != "users_file" {
			continue
		}
		doc, err := userfile.Load(f.Path)
		if err != nil {
			return fmt.Sprintf("warning: cannot read the user file to check the user: %v", err)
		}
		if !doc.Has(name) {
			return fmt.Sprintf("warning: user %q is in no user file (%s): the decision is for a user who cannot sign in", name, fspath.Show(f.Path))
		}
		return ""
	}
	if users, ok := a.Users(); ok {
		if !slices.Contains(users, name) {
			return fmt.Sprintf("warning: user %q is not the configured user (username = %s): the decision is for a user who cannot sign in", name, strings.Join(users, ", "))
		}
		return ""
	}
	return fmt.Sprintf("note: type %s has no list of users here (its identity provider names them): the user name is not checked", a.TypeName)
}

// accessTarget reads the access command's request as serve reads a request
// line: -path in origin form ("//x" is a path) or absolute form, whose host
// is the request's host (as it is for Go's server) and must then agree
// with -host; the methods of a _method parameter count beside -method. It
// says what is wrong on standard error and reports false for wrong usage.
func accessTarget(c *cli, method, target, host string) (access.Target, bool) {
	u, targetHost := access.ParseTarget(target)
	if u == nil {
		fmt.Fprintln(c.stderr, "backupweb access: -path must be a path starting with /, such as /admin/users, or an absolute http(s) URL")
		return access.Target{}, false
	}
	if targetHost != "" {
		if host != "" && access.NormalHost(host) != access.NormalHost(targetHost) {
			fmt.Fprintf(c.stderr, "backupweb access: -host %q and the host of -path %q differ; give one\n", host, targetHost)
			return access.Target{}, false
		}
		host = targetHost
	}
	if host == "" {
		host = noHost
	}
	return access.ReadForwarded(method, target, host, nil), true
}

// explainRules writes the effective access rules, one a line, and the
// hosts served (access.Rules.ExplainHosts), for check-config -explain.
func explainRules(w io.Writer, rules *access.Rules) {
	fmt.Fprintln(w, "access rules, in order (the first that names a request decides):")
	for _, line := range rules.Explain() {
		fmt.Fprintln(w, "  "+line)
	}
	fmt.Fprintln(w, rules.ExplainHosts())
}
