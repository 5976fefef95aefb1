package cli

import (
	"context"
	"fmt"

	"github.com/waitroom/waitroom/internal/config"
)

func init() {
	register(command{
		name:    "check-config",
		summary: "check a configuration file and print every problem in it",
		run:     runCheckConfig,
	})
}

func runCheckConfig(_ context.Context, args []string, s stdio) int {
	fs := newFlags("check-config", `Usage: waitroom check-config -c FILE

Reads a configuration file, replaces its ${NAME} references with
environment variables, and checks every setting, without starting or
connecting to anything. Prints "configuration is valid" and exits 0, or
prints every problem, one per line, and exits 1.
`)
	path := fs.String("c", "", "the configuration `FILE` to check")
	if code, done := parseFlags(fs, args, s); done {
		return code
	}
	if code, done := noArgs(fs, s); done {
		return code
	}
	if *path == "" {
		return badUsage(fs, s, "missing -c FILE")
	}
	if _, err := loadConfig(*path); err != nil {
		for _, p := range config.Problems(err) {
			fmt.Fprintln(s.stderr, p)
		}
		return exitError
	}
	fmt.Fprintln(s.stdout, "configuration is valid")
	return exitOK
}
