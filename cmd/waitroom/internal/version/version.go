package version

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// Set with -ldflags "-X ..." (see the package documentation). After
// package initialisation none is empty. Read them, never write them.
var (
	// Version is the release, such as "v1.2.0", or "devel".
	Version string
	// Commit is the VCS revision built, with "-dirty" when the tree had
	// changes, or "unknown".
	Commit string
	// Date is when the build was made (or the commit's time, from the
	// build information), RFC 3339, or "unknown".
	Date string
)

func init() {
	bi, _ := debug.ReadBuildInfo()
	Version, Commit, Date = resolve(Version, Commit, Date, bi)
}

// resolve fills what the linker left empty from bi, which may be nil.
func resolve(version, commit, date string, bi *debug.BuildInfo) (string, string, string) {
	if bi != nil {
		if version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			version = bi.Main.Version
		}
		var revision, vcsTime string
		var modified bool
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				revision = s.Value
			case "vcs.time":
				vcsTime = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
		if commit == "" && revision != "" {
			commit = revision
			if modified {
				commit += "-dirty"
			}
		}
		if date == "" {
			date = vcsTime
		}
	}
	if version == "" {
		version = "devel"
	}
	if commit == "" {
		commit = "unknown"
	}
	if date == "" {
		date = "unknown"
	}
	return version, commit, date
}

// String describes the build in one line:
// "waitroom v1.2.0 (commit 0123456789ab, built 2026-01-02T03:04:05Z, go1.26.0 linux/amd64)".
func String() string {
	return fmt.Sprintf("waitroom %s (commit %s, built %s, %s %s/%s)",
		Version, shortCommit(Commit), Date, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

// shortCommit cuts a full revision hash to 12 characters, keeping a
// "-dirty" suffix.
func shortCommit(c string) string {
	hash, dirty := c, ""
	if len(c) > 6 && c[len(c)-6:] == "-dirty" {
		hash, dirty = c[:len(c)-6], "-dirty"
	}
	if len(hash) == 40 || len(hash) == 64 {
		hash = hash[:12]
	}
	return hash + dirty
}
