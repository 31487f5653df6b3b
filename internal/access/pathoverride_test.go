package access

import (
	"net/http"
	"testing"
)

func TestPathOverrideSpellings(t *testing.T) {
	for _, tt := range []struct {
		name string
		want string // "": not a path override
	}{
		{"X-Original-URL", "X-Original-URL"},
		{"x-original-url", "X-Original-URL"},
		{"X_Original_URL", "X-Original-URL"},
		{"X-ORIGINAL_url", "X-Original-URL"},
		{"X-Rewrite-URL", "X-Rewrite-URL"},
		{"x_rewrite_url", "X-Rewrite-URL"},
		{"X-Rewrite-Url", "X-Rewrite-URL"},
		{"X-Override-URL", "X-Override-URL"},
		{"X_OVERRIDE_URL", "X-Override-URL"},
		// What the nginx snippet sets, and near misses.
		{"X-Original-URI", ""},
		{"X_Original_URI", ""},
		{"X-Original-Method", ""},
		{"X-Original-URLs", ""},
		{"Original-URL", ""},
		{"X-HTTP-Method-Override", ""},
		{"", ""},
	} {
		if got := IsPathOverride(tt.name); got != (tt.want != "") {
			t.Errorf("IsPathOverride(%q) = %v", tt.name, got)
		}
		got, ok := PathOverride(http.Header{"Accept": {"*/*"}, tt.name: {"/admin"}})
		if got != tt.want || ok != (tt.want != "") {
			t.Errorf("PathOverride with %q = %q, %v, want %q", tt.name, got, ok, tt.want)
		}
	}
}

func TestIsPathOverrideAllocatesNothing(t *testing.T) {
	names := []string{"X_Rewrite_Url", "X-Original-URI", "Accept", "x-override-url"}
	if n := testing.AllocsPerRun(100, func() {
		for _, name := range names {
			IsPathOverride(name)
		}
	}); n != 0 {
		t.Errorf("%v allocations", n)
	}
}
