package browsertest

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

func TestRequireTools(t *testing.T) {
	tests := []struct {
		value string
		want  bool
	}{{"1", true}, {"", false}, {"0", false}, {"yes", false}}
	for _, tt := range tests {
		t.Setenv("BACKUPWEB_REQUIRE_TOOLS", tt.value)
		if got := RequireTools(); got != tt.want {
			t.Errorf("RequireTools() with %q = %v", tt.value, got)
		}
	}
}

func TestFind(t *testing.T) {
	dir := t.TempDir()
	fake := filepath.Join(dir, "my-chromium")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, env, path string
		want            string
		ok              bool
	}{
		{"env path", fake, "", fake, true},
		{"env missing", filepath.Join(dir, "absent"), "", "", false},
		{"nothing on PATH", "", dir, "", false},
		{"on PATH", "", writeOnPath(t, "chromium-browser"), "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("BACKUPWEB_CHROMIUM", tt.env)
			t.Setenv("PATH", tt.path)
			got, ok := Find()
			if ok != tt.ok || (tt.want != "" && got != tt.want) {
				t.Fatalf("Find() = %q, %v; want %q, %v", got, ok, tt.want, tt.ok)
			}
		})
	}
}

// writeOnPath makes a folder holding an executable named name.
func writeOnPath(t *testing.T, name string) string {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// stopTB records how New stopped the test: Skip or Fatal end the calling
// goroutine, as testing's do.
type stopTB struct {
	testing.TB
	how string
	msg string
}

func (s *stopTB) Skip(args ...any)  { s.stop("skip", args) }
func (s *stopTB) Fatal(args ...any) { s.stop("fatal", args) }

func (s *stopTB) stop(how string, args []any) {
	s.how, s.msg = how, fmt.Sprint(args...)
	runtime.Goexit()
}

func TestNewWithoutBrowser(t *testing.T) {
	tests := []struct {
		require string
		want    string
	}{{"", "skip"}, {"1", "fatal"}}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			t.Setenv("BACKUPWEB_CHROMIUM", filepath.Join(t.TempDir(), "absent"))
			t.Setenv("BACKUPWEB_REQUIRE_TOOLS", tt.require)
			tb := &stopTB{TB: t}
			done := make(chan struct{})
			go func() {
				defer close(done)
				New(tb)
				tb.how = "returned"
			}()
			<-done
			if tb.how != tt.want {
				t.Fatalf("New ended with %s, want %s", tb.how, tt.want)
			}
			if !strings.Contains(tb.msg, "chromium not found") || !strings.Contains(tb.msg, "BACKUPWEB_CHROMIUM") {
				t.Errorf("message %q does not say how to get a browser", tb.msg)
			}
		})
	}
}

func TestNewStartsBrowser(t *testing.T) {
	ctx := New(t)
	got, err := chromedp.Run(ctx, chromedp.Evaluate[int](`6 * 7`))
	if err != nil || got != 42 {
		t.Fatalf("Evaluate = %d, %v", got, err)
	}
}
