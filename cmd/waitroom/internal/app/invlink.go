package app

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/waitroom/waitroom/admission"
	"github.com/waitroom/waitroom/inventory"
	"github.com/waitroom/waitroom/inventory/client"
)

// inventoryLink tells the admission engine how many seats linked events
// have left, read from the seat-hold sidecar every refresh. A seat counts
// as left while it is available or held (a hold may still expire), so an
// event is sold out only when every seat is sold. It is safe for
// concurrent use.
type inventoryLink struct {
	c       *client.Client
	events  []string
	refresh time.Duration
	log     *slog.Logger

	mu   sync.RWMutex
	left map[string]linkCount
	// reads is the outcome of the last read of each event, for the
	// metrics: answered, or refused as not defined at the sidecar.
	reads map[string]linkRead
	fails map[string]int // consecutive failures per event (poll's goroutine only)
}

type linkRead struct{ ok, missing bool }

type linkCount struct {
	remaining int
	at        time.Time
}

// linkStale is how many refreshes a count may miss before it is no longer
// trusted (the engine then admits by its other bounds only).
const linkStale = 5

var _ admission.Inventory = (*inventoryLink)(nil)

func newInventoryLink(c *client.Client, events []string, refresh time.Duration, log *slog.Logger) *inventoryLink {
	return &inventoryLink{c: c, events: events, refresh: refresh, log: log, left: make(map[string]linkCount),
		fails: make(map[string]int), reads: make(map[string]linkRead)}
}

// Remaining implements admission.Inventory.
func (l *inventoryLink) Remaining(event string) (int, bool) {
	l.mu.RLock()
	c, ok := l.left[event]
	l.mu.RUnlock()
	if !ok || time.Since(c.at) > linkStale*l.refresh {
		return 0, false
	}
	return c.remaining, true
}

// read tells the outcome of the last read of event: whether it was
// answered, and whether the sidecar said the event is not defined; known
// is false before the first read.
func (l *inventoryLink) read(event string) (r linkRead, known bool) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	r, known = l.reads[event]
	return r, known
}

// poll reads every linked event once.
func (l *inventoryLink) poll(ctx context.Context) {
	for _, ev := range l.events {
		cctx, cancel := context.WithTimeout(ctx, l.refresh)
		a, err := l.c.Availability(cctx, ev)
		cancel()
		l.mu.Lock()
		l.reads[ev] = linkRead{ok: err == nil, missing: errors.Is(err, inventory.ErrEventNotFound)}
		l.mu.Unlock()
		if err != nil {
			// A sidecar starting, or an event not defined yet, fails a
			// few times: warn when it lasts, and then now and again.
			l.fails[ev]++
			if n := l.fails[ev]; ctx.Err() == nil && (n == linkStale || n%(10*linkStale) == 0) {
				l.log.Warn("app: reading remaining seats keeps failing", "inventory_event", ev, "failures", n, "err", err)
			}
			continue
		}
		l.fails[ev] = 0
		l.mu.Lock()
		l.left[ev] = linkCount{remaining: a.Available + a.Held, at: time.Now()}
		l.mu.Unlock()
	}
}

// run polls until ctx ends.
func (l *inventoryLink) run(ctx context.Context) {
	t := time.NewTicker(l.refresh)
	defer t.Stop()
	for {
		l.poll(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
