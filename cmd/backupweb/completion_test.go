package main

import (
	"context"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestCompletionKnowsEveryFlag compares the completion's flags, and the
// help line of each command, with the flags its -h lists, so neither can
// fall behind.
func TestCompletionKnowsEveryFlag(t *testing.T) {
	flagRE := regexp.MustCompile(`(?m)^  (-[a-z-]+)`)
	for _, cmd := range commands() {
		c, _, stderr := testCLI(context.Background(), "", nil)
		args := []string{cmd.name, "-h"}
		if cmd.name == "user" {
			args = []string{"user", "list", "-h"}
		}
		c.main(args)
		var declared []string
		for _, m := range flagRE.FindAllStringSubmatch(stderr.String(), -1) {
			declared = append(declared, m[1])
		}
		var offered []string
		for _, w := range flagsOf(cmd.name) {
			if strings.HasPrefix(w, "-") {
				offered = append(offered, w)
			}
		}
		for _, f := range declared {
			if !strings.Contains(cmd.usage+" ", "["+f+" ") && !strings.Contains(cmd.usage+" ", "["+f+"]") && !strings.Contains(cmd.usage+" ", " "+f+" ") {
				t.Errorf("%s: the help line %q does not list %s", cmd.name, cmd.usage, f)
			}
		}
		slices.Sort(declared)
		slices.Sort(offered)
		if !slices.Equal(declared, offered) {
			t.Errorf("%s: -h lists %v, completion offers %v", cmd.name, declared, offered)
		}
	}
}

func TestCompletionScriptIsValidBash(t *testing.T) {
	c, out, _ := testCLI(context.Background(), "", nil)
	if code := c.main([]string{"completion", "bash"}); code != exitOK {
		t.Fatalf("exit %d", code)
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash not found")
	}
	cmd := exec.Command(bash, "-n")
	cmd.Stdin = strings.NewReader(out.String())
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("bash -n: %v\n%s", err, b)
	}
	if code := c.main([]string{"completion", "zsh"}); code != exitUsage {
		t.Errorf("completion zsh: exit %d, want 2", code)
	}
}
