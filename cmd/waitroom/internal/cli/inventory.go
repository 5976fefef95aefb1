package cli

import (
	"context"
	"fmt"
	"net"
	"os"

	"github.com/waitroom/waitroom/cmd/waitroom/internal/app"
	"github.com/waitroom/waitroom/cmd/waitroom/internal/config"
)

func init() {
	register(command{name: "inventory", summary: "run the seat-hold sidecar (the inventory API origins call)", run: runInventory})
}

const inventoryHelp = `Usage: waitroom inventory [-c FILE] [--listen ADDR] [--redis URL | --data-dir DIR]
                          [--api-token TOKEN] [--insecure-no-auth]
       waitroom inventory export --event E ...     (see waitroom inventory export -h)
       waitroom inventory reconcile --event E --orders FILE ...

Runs the seat-hold sidecar: the HTTP API under /v1/ that an origin calls to
hold, confirm and release seats, over the embedded store (journaled to
--data-dir, the default) or a Redis. Flags override the configuration file.

Every request needs "Authorization: Bearer TOKEN". The token comes from
--api-token, the file's inventory.api_token, or the environment variable
WAITROOM_INVENTORY_TOKEN, in that order; prefer the environment, since
command lines are visible to other users of the machine.
`

func runInventory(ctx context.Context, args []string, s stdio) int {
	if len(args) > 0 {
		switch args[0] {
		case "export":
			return runInventoryExport(ctx, args[1:], s) // ledger.go
		case "reconcile":
			return runInventoryReconcile(ctx, args[1:], s)
		}
	}
	fs := newFlags("inventory", inventoryHelp)
	path := fs.String("c", "", "configuration `FILE` (optional)")
	listen := fs.String("listen", "", "listen `ADDR`ess, host:port (default "+config.DefaultInventoryListen+")")
	redisURL := fs.String("redis", "", "use the Redis store at `URL` (redis://HOST:PORT/DB)")
	dataDir := fs.String("data-dir", "", "embedded store's data `DIR` (default "+config.DefaultInventoryDataDir+")")
	token := fs.String("api-token", "", "bearer `TOKEN` (prefer WAITROOM_INVENTORY_TOKEN)")
	insecure := fs.Bool("insecure-no-auth", false, "serve without authentication (tests and local development only)")
	if code, done := parseFlags(fs, args, s); done {
		return code
	}
	if code, done := noArgs(fs, s); done {
		return code
	}
	if *redisURL != "" && *dataDir != "" {
		return badUsage(fs, s, "give --redis or --data-dir, not both")
	}

	cfg := config.Default()
	if *path != "" {
		var err error
		if cfg, err = config.Load(*path); err != nil {
			printProblems(s, err)
			return exitError
		}
	}
	inv := &cfg.Inventory
	if *listen != "" {
		inv.Listen = *listen
	}
	if *redisURL != "" {
		inv.Store, inv.Redis.URL, inv.Redis.Cluster = config.StoreRedis, *redisURL, nil
	}
	if *dataDir != "" {
		inv.Store, inv.DataDir = config.StoreEmbedded, *dataDir
	}
	if *token != "" {
		inv.APIToken = *token
	}
	if inv.APIToken == "" {
		inv.APIToken = os.Getenv("WAITROOM_INVENTORY_TOKEN")
	}
	if *insecure {
		inv.InsecureNoAuth, inv.APIToken = true, ""
	}
	if err := config.ValidateFor(cfg, config.RoleSidecar); err != nil {
		if *path != "" {
			err = config.InFile(*path, err)
		}
		printProblems(s, err)
		return exitError
	}

	log := newLogger(cfg.Log, s.stderr)
	key := "inventory.listen"
	if *listen != "" {
		key = "--listen"
	}
	ln, err := net.Listen("tcp", inv.Listen)
	if err != nil {
		startFailed(s, &app.StartError{Key: key, Value: inv.Listen, Err: err})
		return exitError
	}
	sc, err := app.NewSidecar(ctx, *inv, log, ln)
	if err != nil {
		ln.Close()
		startFailed(s, err)
		return exitError
	}
	if err := sc.Run(ctx); err != nil {
		log.Error("inventory sidecar stopped", "err", err)
		return exitError
	}
	return exitOK
}

// printProblems writes each problem of a configuration error on its own line.
func printProblems(s stdio, err error) {
	for _, p := range config.Problems(err) {
		fmt.Fprintln(s.stderr, p)
	}
}
