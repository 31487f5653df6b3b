package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
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
