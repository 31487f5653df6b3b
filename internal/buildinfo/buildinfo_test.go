package buildinfo

import (
	"runtime/debug"
	"testing"
)

func TestFromBuildInfo(t *testing.T) {
	vcs := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "0123456789abcdef0123"}, {Key: "vcs.time", Value: "2026-11-24T10:00:00Z"}, {Key: "vcs.modified", Value: "true"},
	}}
	tests := []struct {
		name    string
		release string
		bi      *debug.BuildInfo
		want    string
	}{
		{"release build", "v1.2.0", vcs, "v1.2.0 (revision 0123456789ab+dirty, 2026-11-24T10:00:00Z, go1.26.8)"},
		{"checkout build", "", vcs, "devel (revision 0123456789ab+dirty, 2026-11-24T10:00:00Z, go1.26.8)"},
		{"go install of a version", "", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v1.1.0"}}, "v1.1.0 (go1.26.8)"},
	}
	for _, tt := range tests {
		if got := fromBuildInfo(tt.release, tt.bi).String(); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
	if got := fromBuildInfo("", nil).Version; got != "devel" {
		t.Errorf("no build info: version %q, want devel", got)
	}
}
