package fspath

import (
	"os"
	"path/filepath"
	"testing"
)

func TestShow(t *testing.T) {
	wd, _ := os.Getwd()
	if got := Show("/abs/x"); got != "/abs/x" {
		t.Errorf("Show(abs) = %q", got)
	}
	if got, want := Show("state"), filepath.Join(wd, "state")+" (state relative to the working directory)"; got != want {
		t.Errorf("Show(rel) = %q, want %q", got, want)
	}
}
