//go:build unix

package testkit

import (
	"os/exec"
	"syscall"
)

// ownGroup makes cmd, once started, the leader of a process group of its
// own, so that the children it starts (Syncthing's monitor starts the real
// Syncthing, gunicorn its workers) can be stopped with it.
func ownGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
}

// killGroup kills the process group cmd leads: cmd and every process it
// started that has not left the group.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process == nil {
		return
	}
	if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); err != nil {
		cmd.Process.Kill()
	}
}
