package cli

import (
	"context"
	"fmt"

	"github.com/waitroom/waitroom/internal/app"
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
prints every problem, one per line, and exits 1. For a configuration of
the proxy it then prints the effective route table: which paths are
gated, by which event, and what happens to every other path.
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
	cfg, err := loadConfig(*path)
	if err != nil {
		for _, p := range config.Problems(err) {
			fmt.Fprintln(s.stderr, p)
		}
		return exitError
	}
	fmt.Fprintln(s.stdout, "configuration is valid")
	if len(cfg.Origins) > 0 || len(cfg.Routes) > 0 {
		fmt.Fprintln(s.stdout)
		if err := app.WriteRouteTable(s.stdout, cfg); err != nil {
			return exitError
		}
	}
	return exitOK
}
