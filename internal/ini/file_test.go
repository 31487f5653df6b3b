package ini

import (
	"os"
	"path/filepath"
	"testing"
)

func TestShowPath(t *testing.T) {
	wd, _ := os.Getwd()
	if got := ShowPath("/abs/x"); got != "/abs/x" {
		t.Errorf("ShowPath(abs) = %q", got)
	}
	if got, want := ShowPath("state"), filepath.Join(wd, "state")+" (state relative to the working directory)"; got != want {
		t.Errorf("ShowPath(rel) = %q, want %q", got, want)
	}
}
