package version

import (
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

func TestResolve(t *testing.T) {
	t.Parallel()
	const rev = "0123456789abcdef0123456789abcdef01234567"
	vcs := &debug.BuildInfo{
		Main: debug.Module{Version: "(devel)"},
		Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: rev},
			{Key: "vcs.time", Value: "2026-01-02T03:04:05Z"},
			{Key: "vcs.modified", Value: "true"},
		},
	}
	tests := []struct {
		name                string
		version, commit, dt string
		bi                  *debug.BuildInfo
		want                [3]string
	}{
		{"nothing at all", "", "", "", nil, [3]string{"devel", "unknown", "unknown"}},
		{"linker flags win", "v1.2.0", "abc", "2026-05-01", vcs, [3]string{"v1.2.0", "abc", "2026-05-01"}},
		{"from VCS", "", "", "", vcs, [3]string{"devel", rev + "-dirty", "2026-01-02T03:04:05Z"}},
		{"go install of a tag", "", "", "", &debug.BuildInfo{Main: debug.Module{Version: "v1.3.0"}}, [3]string{"v1.3.0", "unknown", "unknown"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			v, c, d := resolve(tt.version, tt.commit, tt.dt, tt.bi)
			if got := [3]string{v, c, d}; got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestString(t *testing.T) {
	t.Parallel()
	s := String()
	for _, want := range []string{"waitroom ", Version, runtime.Version(), runtime.GOOS + "/" + runtime.GOARCH} {
		if !strings.Contains(s, want) {
			t.Errorf("%q lacks %q", s, want)
		}
	}
	if Version == "" || Commit == "" || Date == "" {
		t.Errorf("empty after init: %q %q %q", Version, Commit, Date)
	}
}

func TestShortCommit(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"0123456789abcdef0123456789abcdef01234567":       "0123456789ab",
		"0123456789abcdef0123456789abcdef01234567-dirty": "0123456789ab-dirty",
		"abc":     "abc",
		"unknown": "unknown",
	} {
		if got := shortCommit(in); got != want {
			t.Errorf("shortCommit(%q) = %q, want %q", in, got, want)
		}
	}
}
