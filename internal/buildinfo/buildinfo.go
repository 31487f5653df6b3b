// Package buildinfo tells what was built: the release version, the version
// control revision and time, and the Go version. The program prints it
// (`backupweb version`), logs it when it starts listening and exports it as
// the backupweb_build_info metric, so the three always agree.
package buildinfo

import (
	"runtime"
	"runtime/debug"
	"strings"
)

// Version is the release version, set when a release is built:
//
//	go build -ldflags "-X github.com/backupweb/backupweb/buildinfo.Version=v1.2.3" ./cmd/backupweb
//
// Empty: the module version the Go toolchain recorded (a build by `go
// install …@v1.2.3`), else "devel".
var Version = ""

// Info is what was built.
type Info struct {
	// Version is the release version, the module version or "devel".
	Version string
	// Revision is the version control revision, "" when not recorded (a
	// build outside a checkout, or with -buildvcs=false). Modified tells
	// whether the work tree had uncommitted changes.
	Revision string
	Modified bool
	// Time is the revision's commit time (RFC 3339), "" when not recorded.
	Time string
	// GoVersion is the Go toolchain that built the program.
	GoVersion string
}

// Get returns the program's build information.
func Get() Info {
	bi, _ := debug.ReadBuildInfo()
	return fromBuildInfo(Version, bi)
}

// fromBuildInfo builds Info from a release version (may be "") and what
// the toolchain recorded (may be nil).
func fromBuildInfo(release string, bi *debug.BuildInfo) Info {
	info := Info{Version: release, GoVersion: runtime.Version()}
	if bi == nil {
		if info.Version == "" {
			info.Version = "devel"
		}
		return info
	}
	if bi.GoVersion != "" {
		info.GoVersion = bi.GoVersion
	}
	if info.Version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		info.Version = bi.Main.Version
	}
	if info.Version == "" {
		info.Version = "devel"
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			info.Revision = s.Value
		case "vcs.time":
			info.Time = s.Value
		case "vcs.modified":
			info.Modified = s.Value == "true"
		}
	}
	return info
}

// ShortRevision is the first 12 characters of Revision, with "+dirty" when
// the tree was modified; "" when unknown.
func (i Info) ShortRevision() string {
	if i.Revision == "" {
		return ""
	}
	r := i.Revision
	if len(r) > 12 {
		r = r[:12]
	}
	if i.Modified {
		r += "+dirty"
	}
	return r
}

// String is the line `backupweb version` prints after "backupweb ": the
// version, then what is known of the revision, its time and the Go version,
// for example "v1.2.0 (revision 0123456789ab, 2026-11-24T10:00:00Z, go1.26.8)".
func (i Info) String() string {
	var extra []string
	if r := i.ShortRevision(); r != "" {
		extra = append(extra, "revision "+r)
	}
	if i.Time != "" {
		extra = append(extra, i.Time)
	}
	if i.GoVersion != "" {
		extra = append(extra, i.GoVersion)
	}
	if len(extra) == 0 {
		return i.Version
	}
	return i.Version + " (" + strings.Join(extra, ", ") + ")"
}
