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

const usage = `Usage: waitroom-load sim|http|origin [flags]

  sim     the deterministic flash-sale simulation of the admission engine
  http    a crowd through real waitroom replicas, end to end, with a report
  origin  a small origin that counts the visitors active at it at once

waitroom-load MODE -h lists a mode's flags.
`

const simUsage = `Usage: waitroom-load sim [flags]

Runs the deterministic flash-sale simulation and prints its report.
Flags:
`

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	switch args[0] {
	case "sim":
		return runSim(args[1:], stdout, stderr)
	case "http":
		return runHTTP(args[1:], stdout, stderr)
	case "origin":
		return runOrigin(args[1:], stdout, stderr)
	}
	fmt.Fprint(stderr, usage)
	return 2
}

// runSim is `waitroom-load sim`.
func runSim(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("waitroom-load sim", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, simUsage); fs.PrintDefaults() }
	scenario := fs.String("scenario", "capacity-changes", "capacity-changes (200 → 100 → 200 visitors/min) or steady (for ETA honesty)")
	scale := fs.Int("scale", 1, "multiply arrivals and origin capacity by `N`")
	seed := fs.Uint64("seed", 0, "random seed (0: the scenario's own)")
	duration := fs.Duration("duration", 0, "simulated time after the queue opens (0: the scenario's own)")
	expected := fs.Float64("expected-rate", -1, "the event's controller.expected_rate in visitors/min, which the first ETAs come from (0: none; -1: the scenario's own)")
	if err := fs.Parse(args); err != nil {
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
