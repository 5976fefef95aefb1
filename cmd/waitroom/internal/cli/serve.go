package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/waitroom/waitroom/cmd/waitroom/internal/app"
	"github.com/waitroom/waitroom/cmd/waitroom/internal/config"
)

func init() {
	register(command{name: "serve", summary: "run the waiting-room proxy in front of your origin (-c FILE)", run: runServe})
}

const serveHelp = `Usage: waitroom serve -c FILE

Runs waitroom in front of the origins the file names: routes gated by
events, the waiting room, the waiting-room API under serve.prefix (/_wr),
the auth_request endpoint, and the operator API on admin.listen. With
serve.with_inventory it also runs the seat-hold sidecar of the inventory
section. See configs/ for commented examples; check a file first with
waitroom check-config -c FILE.

It stops gracefully on SIGINT or SIGTERM: listeners close, requests in
flight get serve.shutdown_grace to finish.
`

func runServe(ctx context.Context, args []string, s stdio) int {
	fs := newFlags("serve", serveHelp)
	path := fs.String("c", "", "configuration `FILE` (required)")
	if code, done := parseFlags(fs, args, s); done {
		return code
	}
	if code, done := noArgs(fs, s); done {
		return code
	}
	if *path == "" {
		return badUsage(fs, s, "serve needs a configuration file: -c FILE")
	}
	cfg, err := config.Load(*path)
	if err != nil {
		printProblems(s, err)
		return exitError
	}
	if err := config.ValidateFor(cfg, config.RoleProxy); err != nil {
		printProblems(s, config.InFile(*path, err))
		return exitError
	}
	log := newLogger(cfg.Log, s.stderr)
	w, err := app.NewServe(ctx, cfg, log, app.Listeners{})
	if err != nil {
		startFailed(s, err)
		return exitError
	}
	if err := w.Run(ctx); err != nil {
		log.Error("waitroom stopped", "err", err)
		return exitError
	}
	return exitOK
}

// startFailed reports a start-up error: one line, "waitroom: " and the
// setting that failed with the cause ("waitroom: serve.listen
// 127.0.0.1:8080: address already in use").
func startFailed(s stdio, err error) {
	msg := app.OneLine(err)
	if !strings.HasPrefix(msg, "waitroom") {
		msg = "waitroom: " + msg
	}
	fmt.Fprintln(s.stderr, msg)
}
