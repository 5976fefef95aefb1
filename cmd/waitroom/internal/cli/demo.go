package cli

import (
	"context"

	"github.com/waitroom/waitroom/cmd/waitroom/internal/app"
	"github.com/waitroom/waitroom/cmd/waitroom/internal/config"
)

func init() {
	register(command{name: "demo", summary: "run the waiting room in front of a built-in ticket shop: one command, no Redis", run: runDemo})
}

const demoHelp = `Usage: waitroom demo [--listen ADDR] [--crowd N]

Runs the whole thing in one process, with no Redis and no configuration
file: the waiting room (configs/demo.yaml, built in) in front of a small
demo ticket shop, which holds and sells seats through the seat-hold
sidecar. Open the printed URL: the queue opens at once, the sale starts
30 seconds later with a public draw, and five visitors shop at a time.
A simulated crowd (--crowd) queues with you so you see the queue move.

Its data lives in a temporary directory removed when it stops (Ctrl-C).
`

func runDemo(ctx context.Context, args []string, s stdio) int {
	fs := newFlags("demo", demoHelp)
	listen := fs.String("listen", app.DefaultDemoListen, "`ADDR`ess to open in the browser, host:port")
	crowd := fs.Int("crowd", 12, "simulated visitors who queue and buy alongside you (`N`, 0 for none)")
	if code, done := parseFlags(fs, args, s); done {
		return code
	}
	if code, done := noArgs(fs, s); done {
		return code
	}
	if *crowd < 0 || *crowd > 1000 {
		return badUsage(fs, s, "--crowd must be 0 to 1000")
	}
	log := newLogger(config.Log{Level: config.LevelWarn, Format: config.FormatText}, s.stderr)
	if err := app.RunDemo(ctx, app.DemoOptions{Listen: *listen, Crowd: *crowd, Out: s.stdout, Logger: log}); err != nil {
		startFailed(s, err)
		return exitError
	}
	return exitOK
}
