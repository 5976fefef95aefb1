package cli

import (
	"context"
	"fmt"

	"github.com/waitroom/waitroom/cmd/waitroom/internal/app"
	"github.com/waitroom/waitroom/cmd/waitroom/internal/config"
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
connecting to anything; it reads the signing keys' files as serve does.
Secrets that could be guessed are refused (waitroom keygen -secret makes
good ones). Prints "configuration is valid" and exits 0, or prints every
problem at once (unset variables, unknown keys, values of the wrong type
and invalid settings alike), one per line in file order as
FILE:LINE: KEY.PATH: what is wrong and what to do, and exits 1. For a configuration of the proxy it
then prints the effective route table: which paths are gated, by which
event, and what happens to every other path.
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
	// Every problem at once: parse and validation problems together, in
	// line order, each with its key path and what to do.
	cfg, err := loadConfig(*path)
	if err == nil && cfg.Roles()&config.RoleProxy != 0 {
		// The key files are read as serve reads them: a secret_file that
		// is short or guessable, or a PEM key that does not parse, is
		// found now rather than at start-up.
		if _, kerr := cfg.Serve.Keys.Keyring(); kerr != nil {
			err = config.InFile(*path, kerr)
		}
	}
	if err != nil {
		for _, p := range config.Problems(err) {
			fmt.Fprintln(s.stderr, p)
		}
		return exitError
	}
	fmt.Fprintln(s.stdout, "configuration is valid")
	if cfg.Roles()&config.RoleProxy != 0 {
		fmt.Fprintln(s.stdout)
		if err := app.WriteRouteTable(s.stdout, cfg); err != nil {
			return exitError
		}
	}
	return exitOK
}
