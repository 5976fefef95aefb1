package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/waitroom/waitroom/admission/report"
	"github.com/waitroom/waitroom/cmd/waitroom/internal/app"
)

func init() {
	register(command{name: "report", summary: "print an event's record after the sale (per-minute table, totals, draws) as CSV, JSON or HTML", run: runReport})
}

const reportHelp = `Usage: waitroom report -c FILE --event E [--format json|csv|html] [--out FILE] [--force]

Prints the record of an event after the sale, read from the admission
store the configuration names (the leader of each event writes a record
of every minute there, kept for admission.report_retention): the
per-minute table (arrivals, admitted, active visitors, origin requests,
latency p50/p99 and errors, the controller's target and the reason of
its last move, seats sold, no-shows, ETA honesty, bot-defence outcomes
by band), the totals with the no-show rate and the share of visitors
admitted before the eta_high they were shown, and the draws with the
paths of their public audits.

--format json (the default) prints everything; csv the per-minute
table; html one self-contained page with charts (no script, nothing
fetched). The output is the same as GET /admin/v1/events/E/report.

The embedded store is locked by a running waitroom serve: use the admin
endpoint while it runs, or this command after it stops. With Redis
either works at any time.
`

func runReport(ctx context.Context, args []string, s stdio) int {
	fs := newFlags("report", reportHelp)
	path := fs.String("c", "", "the configuration `FILE` (its admission store and events)")
	eventID := fs.String("event", "", "the event `ID`")
	format := fs.String("format", "json", "json, csv or html")
	out := fs.String("out", "", "write to `FILE` (default: standard output)")
	force := fs.Bool("force", false, "replace --out FILE if it exists")
	if code, done := parseFlags(fs, args, s); done {
		return code
	}
	if code, done := noArgs(fs, s); done {
		return code
	}
	f, err := report.ParseFormat(*format)
	switch {
	case *path == "":
		return badUsage(fs, s, "missing -c FILE")
	case *eventID == "":
		return badUsage(fs, s, "missing --event ID")
	case err != nil:
		return badUsage(fs, s, "--format must be json, csv or html (got %q)", *format)
	case *force && *out == "":
		return badUsage(fs, s, "--force replaces --out FILE: give one")
	}
	cfg, err := loadConfig(*path)
	if err != nil {
		printProblems(s, err)
		return exitError
	}
	log := newLogger(cfg.Log, s.stderr)
	store, closeStore, err := app.OpenAdmissionStore(ctx, cfg.Admission, log)
	if err != nil {
		startFailed(s, err)
		return exitError
	}
	defer closeStore()
	rep, err := app.EventReport(ctx, cfg, store, *eventID)
	if err != nil {
		fmt.Fprintf(s.stderr, "waitroom report: %v\n", err)
		return exitError
	}
	write := func(w io.Writer) error { return rep.Write(w, f) }
	if *out == "" {
		err = write(s.stdout)
	} else {
		err = writeNewFile(*out, *force, write)
	}
	if err != nil {
		fmt.Fprintf(s.stderr, "waitroom report: %v\n", err)
		return exitError
	}
	return exitOK
}
