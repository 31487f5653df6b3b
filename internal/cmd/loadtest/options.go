package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"
	"time"
)

// options are the command line's settings, checked.
type options struct {
	// scenarios are the names to run, in the order of the scenarios table.
	scenarios []string
	// duration bounds each part of a scenario (a steady load, the flood,
	// the repeated bursts).
	duration time.Duration
	// conns is the number of parallel keep-alive connections of the
	// right-credential scenarios, and the size of the cold-start burst.
	conns int
	// bin is a prebuilt backupweb binary; empty: build ./cmd/backupweb.
	bin string
	// maxRequests bounds the requests of each part of a scenario.
	maxRequests int64
	// flooders is the number of flooding clients; 0: the scenario's own.
	flooders int
	// goal bounds the measuring client's 99th percentile during a flood;
	// 0 turns that check off.
	goal time.Duration
	// targets are the base URLs of running instances the failover
	// scenario loads, user is the name it signs in as (the password is in
	// $LOADTEST_PASSWORD), and untilEOF ends its load when standard input
	// ends.
	targets  []string
	user     string
	untilEOF bool
}

// errHelp is returned by parseArgs for -h and -help: the usage has been
// printed and nothing else should be.
var errHelp = flag.ErrHelp

// parseArgs reads the command line (without the program's name). Usage and
// errors go to out.
func parseArgs(args []string, out io.Writer) (options, error) {
	fs := flag.NewFlagSet("loadtest", flag.ContinueOnError)
	fs.SetOutput(out)
	scenario := fs.String("scenario", "all", "scenarios to run: one name, a comma list, or all ("+strings.Join(scenarioNames(), ", ")+")")
	var o options
	fs.DurationVar(&o.duration, "duration", 10*time.Second, "how long each part of a scenario loads the server")
	fs.IntVar(&o.conns, "conns", 32, "parallel keep-alive connections of the right-credential scenarios (and the cold-start burst's size)")
	fs.StringVar(&o.bin, "bin", "", "a prebuilt backupweb binary to load instead of building ./cmd/backupweb")
	fs.Int64Var(&o.maxRequests, "max-requests", 2_000_000, "upper bound on the requests of each part of a scenario")
	fs.IntVar(&o.flooders, "flooders", 0, "flooding clients of the flood scenarios (default 16 for flood-basic, 64 for flood-login)")
	fs.DurationVar(&o.goal, "goal", 100*time.Millisecond, "during a flood, the measuring client's 99th percentile must stay under this (0: not checked)")
	targets := fs.String("targets", "", "failover scenario: base URLs of running instances, comma-separated (http://127.0.0.1:8080,http://127.0.0.1:8081)")
	fs.StringVar(&o.user, "user", "", "failover scenario: the name to sign in as; its password is read from $"+passwordEnv)
	fs.BoolVar(&o.untilEOF, "until-eof", false, "failover scenario: also end the load when standard input ends (for a program driving a fault)")
	fs.Usage = func() {
		fmt.Fprintln(out, "usage: loadtest [flags]")
		fmt.Fprintln(out, "\nscenarios:")
		for _, s := range scenarios {
			fmt.Fprintf(out, "  %-11s %s\n", s.name, s.about)
		}
		fmt.Fprintln(out, "\nflags:")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return options{}, err
	}
	if fs.NArg() > 0 {
		return options{}, fmt.Errorf("unexpected argument %q (every setting is a flag)", fs.Arg(0))
	}
	var err error
	if o.scenarios, err = selectScenarios(*scenario); err != nil {
		return options{}, err
	}
	if o.targets, err = parseTargets(*targets); err != nil {
		return options{}, err
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	if len(o.targets) > 0 && !given["scenario"] {
		o.scenarios = []string{"failover"}
	}
	switch {
	case len(o.targets) > 0 && !slices.Equal(o.scenarios, []string{"failover"}):
		return options{}, errors.New("-targets loads running instances: only the failover scenario runs with it")
	case len(o.targets) == 0 && slices.Contains(strings.Split(strings.ReplaceAll(*scenario, " ", ""), ","), "failover"):
		return options{}, errors.New("the failover scenario needs -targets")
	case len(o.targets) > 0 && o.user == "":
		return options{}, errors.New("-targets needs -user (and its password in $" + passwordEnv + ")")
	case len(o.targets) == 0 && (o.user != "" || o.untilEOF):
		return options{}, errors.New("-user and -until-eof are for the failover scenario, with -targets")
	}
	if len(o.targets) == 0 {
		// "all" is every scenario that starts its own servers.
		o.scenarios = slices.DeleteFunc(o.scenarios, func(s string) bool { return s == "failover" })
	}
	switch {
	case o.duration <= 0:
		return options{}, fmt.Errorf("-duration must be positive, not %s", o.duration)
	case o.conns < 1 || o.conns > 1024:
		return options{}, fmt.Errorf("-conns must be between 1 and 1024, not %d", o.conns)
	case o.maxRequests < 1:
		return options{}, fmt.Errorf("-max-requests must be at least 1, not %d", o.maxRequests)
	case o.flooders < 0 || o.flooders > 1024:
		return options{}, fmt.Errorf("-flooders must be between 0 and 1024, not %d", o.flooders)
	case o.goal < 0:
		return options{}, fmt.Errorf("-goal must not be negative, not %s", o.goal)
	}
	return o, nil
}

// selectScenarios turns the value of -scenario (one name, a comma list, or
// all) into names, in the order of the scenarios table, each once.
func selectScenarios(value string) ([]string, error) {
	known := scenarioNames()
	want := map[string]bool{}
	for _, name := range strings.Split(value, ",") {
		name = strings.TrimSpace(name)
		switch {
		case name == "all":
			for _, k := range known {
				want[k] = true
			}
		case slices.Contains(known, name):
			want[name] = true
		case name == "":
			return nil, errors.New("-scenario: an empty name in the list")
		default:
			return nil, fmt.Errorf("-scenario: unknown scenario %q (known: %s, or all)", name, strings.Join(known, ", "))
		}
	}
	var names []string
	for _, k := range known {
		if want[k] {
			names = append(names, k)
		}
	}
	return names, nil
}

// scenarioNames lists the scenarios in the order they run.
func scenarioNames() []string {
	names := make([]string, len(scenarios))
	for i, s := range scenarios {
		names[i] = s.name
	}
	return names
}

// parseTargets reads -targets: base URLs (http or https, a host, no
// path), comma-separated; empty: none.
func parseTargets(value string) ([]string, error) {
	if strings.TrimSpace(value) == "" {
		return nil, nil
	}
	var out []string
	for _, t := range strings.Split(value, ",") {
		t = strings.TrimSuffix(strings.TrimSpace(t), "/")
		u, err := url.Parse(t)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Path != "" || u.RawQuery != "" {
			return nil, fmt.Errorf("-targets: %q is not a base URL like http://127.0.0.1:8080", t)
		}
		out = append(out, t)
	}
	return out, nil
}
