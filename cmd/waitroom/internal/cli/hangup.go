package cli

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/waitroom/waitroom/cmd/waitroom/internal/app"
)

// onHangup reloads w's configuration file at every SIGHUP until ctx ends
// or the returned stop is called. Reload logs what it applied, or every
// problem of a refused file.
func onHangup(ctx context.Context, w *app.Waitroom) (stop func()) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-hup:
				_, _ = w.Reload(ctx) // it logs its outcome
			case <-ctx.Done():
				return
			case <-done:
				return
			}
		}
	}()
	return func() { signal.Stop(hup); close(done) }
}
