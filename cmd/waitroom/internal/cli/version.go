package cli

import (
	"context"
	"fmt"

	"github.com/waitroom/waitroom/cmd/waitroom/internal/version"
)

func init() {
	register(command{
		name:    "version",
		summary: "print the version, commit and build date",
		run:     runVersion,
	})
}

func runVersion(_ context.Context, args []string, s stdio) int {
	fs := newFlags("version", `Usage: waitroom version

Prints the version, commit and build date of this binary, and the Go
version and platform it was built with.
`)
	if code, done := parseFlags(fs, args, s); done {
		return code
	}
	if code, done := noArgs(fs, s); done {
		return code
	}
	fmt.Fprintln(s.stdout, version.String())
	return exitOK
}
