package testkit

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// leftover is a process found running with a program's mark.
type leftover struct {
	pid  int
	name string
}

// marked returns the processes still running, a moment after their
// program's process group was killed, whose environment holds mark, each
// killed. A process the group kill reached is given two seconds to be
// gone (a zombie no parent reaps counts as gone); one still running then
// escaped the group.
func marked(mark string) []leftover {
	want := []byte(LeakMark + "=" + mark)
	deadline := time.Now().Add(2 * time.Second)
	for {
		found := scanMarked(want)
		if len(found) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			for _, p := range found {
				syscall.Kill(p.pid, syscall.SIGKILL)
			}
			return found
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// scanMarked reads the environment of every process in /proc and returns
// those running (not zombies) whose environment holds want.
func scanMarked(want []byte) []leftover {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var found []leftover
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil || !hasEntry(env, want) || !running(pid) {
			continue
		}
		comm, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "comm"))
		found = append(found, leftover{pid: pid, name: strings.TrimSpace(string(comm))})
	}
	return found
}

// hasEntry reports whether the NUL-separated environment env holds the
// entry want.
func hasEntry(env, want []byte) bool {
	for entry := range bytes.SplitSeq(env, []byte{0}) {
		if bytes.Equal(entry, want) {
			return true
		}
	}
	return false
}

// running reports whether process pid is still running: it exists and is
// not a zombie waiting for a parent to reap it (an orphan's new parent
// may never do that in a container).
func running(pid int) bool {
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(stat, ')')
	return i >= 0 && i+2 < len(stat) && stat[i+2] != 'Z'
}
