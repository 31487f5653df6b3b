package web

import (
	"syscall"
	"testing"
	"time"
)

// changeTime is the status change time (ctime) of the file at p.
func changeTime(t testing.TB, p string) time.Time {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Stat(p, &st); err != nil {
		t.Fatal(err)
	}
	return time.Unix(st.Ctim.Sec, st.Ctim.Nsec)
}
