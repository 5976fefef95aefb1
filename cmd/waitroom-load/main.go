package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/waitroom/waitroom/admission/sim"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

const usage = `Usage: waitroom-load sim [flags]

Runs the deterministic flash-sale simulation and prints its report.
Flags:
`

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "sim" {
		fmt.Fprint(stderr, usage)
		return 2
	}
	fs := flag.NewFlagSet("waitroom-load sim", flag.ContinueOnError)
	fs.SetOutput(stderr)
	scenario := fs.String("scenario", "capacity-changes", "capacity-changes (200 → 100 → 200 visitors/min) or steady (for ETA honesty)")
	scale := fs.Int("scale", 1, "multiply arrivals and origin capacity by `N`")
	seed := fs.Uint64("seed", 0, "random seed (0: the scenario's own)")
	duration := fs.Duration("duration", 0, "simulated time after the queue opens (0: the scenario's own)")
	expected := fs.Float64("expected-rate", -1, "the event's controller.expected_rate in visitors/min, which the first ETAs come from (0: none; -1: the scenario's own)")
	if err := fs.Parse(args[1:]); err != nil {
		return 2
	}
	var cfg sim.Config
	switch *scenario {
	case "capacity-changes":
		cfg = sim.Default()
	case "steady":
		cfg = sim.Steady()
	default:
		fmt.Fprintf(stderr, "waitroom-load: unknown scenario %q\n", *scenario)
		return 2
	}
	if *scale > 1 {
		cfg = sim.Scaled(cfg, *scale)
	}
	if *seed != 0 {
		cfg.Seed = *seed
	}
	if *duration > 0 {
		cfg.Duration = *duration
	}
	if *expected >= 0 {
		cfg.Event.Controller.ExpectedRate = *expected
	}
	started := time.Now()
	r, err := sim.Run(cfg)
	if err != nil {
		fmt.Fprintf(stderr, "waitroom-load: %v\n", err)
		return 1
	}
	r.Report(stdout)
	fmt.Fprintf(stdout, "\n(%s of wall time)\n", time.Since(started).Round(time.Millisecond))
	return 0
}
