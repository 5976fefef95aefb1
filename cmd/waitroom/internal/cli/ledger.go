package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/waitroom/waitroom/cmd/waitroom/internal/app"
	"github.com/waitroom/waitroom/cmd/waitroom/internal/config"
	"github.com/waitroom/waitroom/inventory"
	"github.com/waitroom/waitroom/inventory/client"
	"github.com/waitroom/waitroom/inventory/ledger"
)

const exportHelp = `Usage: waitroom inventory export --event E (-c FILE | --url URL) [--out FILE] [--force]

Writes the seat-hold sidecar's full state of event E as JSON Lines, one
object per line with a "type": "event" (the definition, first), "seat"
(every numbered seat and its state), "pool" (each GA pool's counts),
"hold" (each live hold), "order" (every order, confirmed or cancelled)
and "audit" (last: the audit stream's position the holds and orders were
read up to, and when). It streams: a large event is never read into
memory at once. Snapshot an event before and after its sale, and
reconcile it with the origin's orders (waitroom inventory reconcile).
Seats are read before holds and orders: export while nothing is sold
(after the sale, or with the event paused) for one consistent instant.

The state is read from the inventory store of the configuration -c FILE
(inventory.store; an embedded store is locked while its sidecar runs),
or through a running sidecar's API at --url, with the token from
WAITROOM_INVENTORY_TOKEN or the file's inventory.api_token.
`

const reconcileHelp = `Usage: waitroom inventory reconcile --event E --orders FILE (-c FILE | --url URL)

Compares the numbered seats the sidecar sold for event E (the seats of
its confirmed orders) with the origin's orders in FILE ("-": standard
input), and reports every seat sold in one and not the other, with its
order. Exits 0 when they agree, 1 when they do not (or on an error).

FILE is JSON Lines, one order per line:

  {"order_id": "A-1001", "seats": ["A-1-1", "A-1-2"]}

or CSV with a header naming an order_id column and either a seat column
(one seat per row) or a seats column (the order's seats separated by
spaces or semicolons); other fields and columns are ignored. A cancelled
or refunded order must be left out. GA places have no seat ids and are
not compared. The sidecar is reached as by waitroom inventory export.
`

// ledgerFlags are the flags that say where the sidecar's state is.
type ledgerFlags struct {
	path, url, event *string
}

func addLedgerFlags(fs *flag.FlagSet) ledgerFlags {
	return ledgerFlags{
		path:  fs.String("c", "", "read the inventory store of the configuration `FILE`"),
		url:   fs.String("url", "", "read through the sidecar API at `URL` instead"),
		event: fs.String("event", "", "the inventory event `ID`"),
	}
}

// open returns the store the flags name and its close function.
func (f ledgerFlags) open(ctx context.Context, fs *flag.FlagSet, s stdio) (inventory.Store, func() error, int) {
	switch {
	case *f.event == "":
		return nil, nil, badUsage(fs, s, "missing --event ID")
	case (*f.path == "") == (*f.url == ""):
		return nil, nil, badUsage(fs, s, "give -c FILE or --url URL (one of them)")
	}
	cfg := config.Default()
	if *f.path != "" {
		var err error
		if cfg, err = config.Load(*f.path); err != nil {
			printProblems(s, err)
			return nil, nil, exitError
		}
	}
	if *f.url != "" {
		token := os.Getenv("WAITROOM_INVENTORY_TOKEN")
		if token == "" {
			token = cfg.Inventory.APIToken
		}
		c := client.New(*f.url, token)
		return c, c.Close, exitOK
	}
	if err := config.ValidateFor(cfg, config.RoleSidecar); err != nil {
		printProblems(s, config.InFile(*f.path, err))
		return nil, nil, exitError
	}
	st, closeStore, err := app.OpenInventoryStore(ctx, cfg.Inventory, newLogger(cfg.Log, s.stderr))
	if err != nil {
		startFailed(s, err)
		return nil, nil, exitError
	}
	return st, closeStore, exitOK
}

func runInventoryExport(ctx context.Context, args []string, s stdio) int {
	fs := newFlags("inventory export", exportHelp)
	lf := addLedgerFlags(fs)
	out := fs.String("out", "", "write to `FILE` (default: standard output)")
	force := fs.Bool("force", false, "replace --out FILE if it exists")
	if code, done := parseFlags(fs, args, s); done {
		return code
	}
	if code, done := noArgs(fs, s); done {
		return code
	}
	if *force && *out == "" {
		return badUsage(fs, s, "--force replaces --out FILE: give one")
	}
	st, closeStore, code := lf.open(ctx, fs, s)
	if st == nil {
		return code
	}
	defer closeStore()
	var sum ledger.Summary
	write := func(w io.Writer) (err error) {
		sum, err = ledger.Export(ctx, st, *lf.event, w)
		return err
	}
	var err error
	if *out == "" {
		err = write(s.stdout)
	} else {
		err = writeNewFile(*out, *force, write)
	}
	if err != nil {
		fmt.Fprintf(s.stderr, "waitroom inventory export: event %s: %v\n", *lf.event, err)
		return exitError
	}
	if *out != "" {
		fmt.Fprintf(s.stdout, "exported event %s into %s: %d seats, %d pools, %d live holds, %d orders, audit at %q (%d entries)\n",
			*lf.event, *out, sum.Seats, sum.Pools, sum.Holds, sum.Orders, sum.Position.Last, sum.Position.Entries)
	}
	return exitOK
}

func runInventoryReconcile(ctx context.Context, args []string, s stdio) int {
	fs := newFlags("inventory reconcile", reconcileHelp)
	lf := addLedgerFlags(fs)
	orders := fs.String("orders", "", "the origin's orders `FILE` (JSON Lines or CSV; - for standard input)")
	if code, done := parseFlags(fs, args, s); done {
		return code
	}
	if code, done := noArgs(fs, s); done {
		return code
	}
	if *orders == "" {
		return badUsage(fs, s, "missing --orders FILE")
	}
	var r io.Reader = s.stdin
	if *orders != "-" {
		f, err := os.Open(*orders)
		if err != nil {
			fmt.Fprintf(s.stderr, "waitroom inventory reconcile: %v\n", err)
			return exitError
		}
		defer f.Close()
		r = f
	}
	o, err := ledger.ReadOrders(r)
	if err != nil {
		fmt.Fprintf(s.stderr, "waitroom inventory reconcile: %s: %v\n", *orders, err)
		return exitError
	}
	st, closeStore, code := lf.open(ctx, fs, s)
	if st == nil {
		return code
	}
	defer closeStore()
	res, err := ledger.Reconcile(ctx, st, *lf.event, o)
	if err != nil {
		fmt.Fprintf(s.stderr, "waitroom inventory reconcile: event %s: %v\n", *lf.event, err)
		return exitError
	}
	if err := res.WriteText(s.stdout); err != nil {
		return exitError
	}
	if !res.Agree() {
		return exitError
	}
	return exitOK
}
