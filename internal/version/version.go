// Package version is the one place a Takoform binary's version comes
// from: the host logs it, `takoform version` prints it, the provider
// reports it to OpenTofu and in its User-Agent (decision
// spec/decisions/0008-deployable-host.md).
package version

import (
	"runtime/debug"
	"strings"
)

// Version is set by release builds with
//
//	-ldflags "-X github.com/takoform/takoform/internal/version.Version=v1.2.3"
//
// and is empty otherwise, when String falls back to the build info.
var Version string

// String returns the version of this binary: Version when a release build
// set it; otherwise the main module's version from the build info ("v1.2.3"
// for `go install …@v1.2.3`, "(devel)" for a local build) followed, when
// the build recorded one, by the VCS revision (12 hex digits) and
// "+dirty" for a modified tree, e.g. "(devel) 0123456789ab+dirty"; "unknown"
// when the binary carries no build info.
func String() string {
	if Version != "" {
		return Version
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	return fromBuildInfo(info)
}

func fromBuildInfo(info *debug.BuildInfo) string {
	v := info.Main.Version
	if v == "" {
		v = "(devel)"
	}
	var rev, modified string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if rev == "" || strings.Contains(v, rev[:min(12, len(rev))]) {
		return v // a pseudo-version already names the revision
	}
	out := v + " " + rev[:min(12, len(rev))]
	if modified == "true" {
		out += "+dirty"
	}
	return out
}
