// Package version tells which build of waitroom is running: the release
// version, the commit and the build date.
//
// Release builds set them with the linker:
//
//	go build -ldflags "-X github.com/waitroom/waitroom/internal/version.Version=v1.2.0 \
//	  -X github.com/waitroom/waitroom/internal/version.Commit=$(git rev-parse HEAD) \
//	  -X github.com/waitroom/waitroom/internal/version.Date=$(date -u +%Y-%m-%dT%H:%M:%SZ)" ./cmd/waitroom
//
// Any left unset are filled from the build information the Go toolchain
// embeds (the module version for go install, the VCS revision and time
// for a build inside a git checkout), else "devel" and "unknown".
//
// It is not a place for feature flags or compatibility checks.
package version
