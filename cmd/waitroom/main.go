package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/waitroom/waitroom/cmd/waitroom/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() { <-ctx.Done(); stop() }() // after the first signal, a second one kills at once
	os.Exit(cli.Main(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
