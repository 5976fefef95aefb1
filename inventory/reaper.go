package inventory

import (
	"context"
	"log/slog"
	"time"
)

// Defaults of the Reaper.
const (
	DefaultReapInterval = time.Second
	DefaultReapBatch    = 500
)

// Reaper expires holds whose time has passed, in batches, so that counts
// and summaries stay fresh and expiry shows in the audit stream promptly.
// Correctness does not depend on it: stores treat expired holds as gone.
type Reaper struct {
	Store    Store
	Interval time.Duration
	Batch    int
	Logger   *slog.Logger
	// OnReap, when set, is told how many holds each pass expired per event.
	OnReap func(event string, n int)
}

// Run reaps every Interval until ctx ends.
func (r *Reaper) Run(ctx context.Context) {
	interval := r.Interval
	if interval <= 0 {
		interval = DefaultReapInterval
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		r.Once(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Once runs one pass over every event: batches until an event has no
// expired holds left. It returns the total expired.
func (r *Reaper) Once(ctx context.Context) int {
	batch := r.Batch
	if batch <= 0 {
		batch = DefaultReapBatch
	}
	events, err := r.Store.Events(ctx)
	if err != nil {
		r.log().Warn("reaper: listing events failed", "err", err)
		return 0
	}
	total := 0
	for _, ev := range events {
		n := 0
		for ctx.Err() == nil {
			k, err := r.Store.Reap(ctx, ev, batch)
			n += k
			if err != nil {
				r.log().Warn("reaper: reap failed", "event", ev, "err", err)
				break
			}
			if k < batch {
				break
			}
		}
		if n > 0 && r.OnReap != nil {
			r.OnReap(ev, n)
		}
		total += n
	}
	return total
}

func (r *Reaper) log() *slog.Logger {
	if r.Logger != nil {
		return r.Logger
	}
	return slog.Default()
}
