// Package configs holds waitroom's example configuration files and embeds
// the one the binary needs: demo.yaml, which waitroom demo runs.
//
// The files themselves are documentation: each is a complete, commented
// configuration for one way to run waitroom (see README.md in this
// directory), loaded and validated by cmd/waitroom/internal/config's tests. The
// package is not where configuration is read or checked; that is
// cmd/waitroom/internal/config.
package configs
