package admission

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"time"
)

// Tick runs one tick of every event, in the order of their ids (so that
// a run is reproducible: events share the engine's random source): the
// lease, and for the leader the draws and the controller; every replica
// follows the store.
func (e *Engine) Tick(ctx context.Context) error {
	var errs []error
	evs := e.all()
	for _, id := range slices.Sorted(maps.Keys(evs)) {
		ev := evs[id]
		if err := ev.tick(ctx, e.clock()); err != nil {
			errs = append(errs, fmt.Errorf("event %s: %w", ev.conf().ID, err))
		}
	}
	return errors.Join(errs...)
}

// Run ticks every event at the shortest tick interval of the events
// until ctx ends. After an Apply it ticks at the new interval.
func (e *Engine) Run(ctx context.Context) {
	every := e.tickEvery()
	e.every.Store(int64(every))
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if err := e.Tick(ctx); err != nil && ctx.Err() == nil {
			e.log.Warn("admission: tick failed", "err", err)
		}
		for next := false; !next; {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				next = true
			case <-e.wake: // the event set changed: same rhythm, its interval
				if d := e.tickEvery(); d != every {
					every = d
					e.every.Store(int64(d))
					t.Reset(d)
				}
			}
		}
	}
}

func (ev *event) tick(ctx context.Context, now time.Time) error {
	ev.tickMu.Lock()
	defer ev.tickMu.Unlock()
	ev.decided = false
	ev.lastTick.Store(now.UnixNano())
	s := ev.e.opts.Store
	id := ev.conf().ID
	if c, err := s.Control(ctx, id); err == nil {
		ev.setControl(&c)
	}
	if rv, err := s.Revocations(ctx, id); err == nil {
		ev.revoked.Store(&rv)
	}
	ev.refreshBars(ctx, now)
	// Every replica writes the pass uses it saw, before the leader
	// measures no-shows from them.
	usesErr := ev.flushUses(ctx)
	// And every replica publishes its measurements, which the leader
	// sums (see sample.go).
	pubErr := ev.publishSample(ctx, now)
	lead, err := s.Lease(ctx, id, ev.e.opts.Replica, ev.lease())
	if err != nil {
		return errors.Join(usesErr, pubErr, err)
	}
	took := lead && !ev.leader.Load()
	if took {
		ev.restored = false // a new leader rescans and restores its controller
		ev.heard = nil
		ev.rec = recorder{} // carries on from the stored minute (record.go)
		for _, l := range ev.lanes {
			l.scanned = -1
		}
	}
	ev.leader.Store(lead)
	// Follow first: a replica that has just become leader (or restarted)
	// learns the draws and counters already stored before it adds any.
	errs := []error{usesErr, pubErr, ev.follow(ctx, now)}
	if took {
		ev.inheritOffers(now)
	}
	if lead {
		errs = append(errs, ev.seedAndDraw(ctx, now), ev.regulate(ctx, now), ev.record(ctx, now))
	}
	ev.releaseLate(now)
	ev.publishFigures(now)
	return errors.Join(errs...)
}

// seedAndDraw gives open tranches their seeds and draws the closed ones.
func (ev *event) seedAndDraw(ctx context.Context, now time.Time) error {
	if now.Before(ev.conf().QueueOpensAt) {
		return nil
	}
	s := ev.e.opts.Store
	cur := trancheAt(ev.conf(), now)
	var errs []error
	for _, l := range ev.lanes {
		// Seeds exist from the moment a tranche (and the next one) opens,
		// so that their commitments are published before they close. An
		// event open from the start has no end of tranches: while its
		// queue is empty a tranche is seeded by its first join instead
		// (see place), so an idle room stores no seeds.
		if !ev.conf().openFromStart || ev.queued() {
			for _, tr := range []int{cur, cur + 1} {
				if _, err := ev.seed(ctx, l, tr); err != nil {
					errs = append(errs, err)
				}
			}
		}
		// Draw every closed tranche after the last drawn or empty one.
		for tr := max(l.scanned, int(l.drawnTo.Load()), ev.floor-1) + 1; tr < cur; tr++ {
			if now.Before(trancheCloses(ev.conf(), tr).Add(joinMargin)) {
				break
			}
			members, err := s.Members(ctx, ev.conf().ID, l.cfg.Name, tr)
			if err != nil {
				errs = append(errs, err)
				break
			}
			if len(members) == 0 {
				l.scanned = tr
				continue
			}
			seed, err := ev.seed(ctx, l, tr)
			if err != nil {
				errs = append(errs, err)
				break
			}
			ordered := Order(seed, members)
			d := Draw{Tranche: tr, Seed: seed, First: l.last.Load() + 1, Count: uint64(len(ordered)), At: now}
			if err := s.RecordDraw(ctx, ev.conf().ID, l.cfg.Name, d); err != nil {
				errs = append(errs, err) // another leader raced us: follow() loads its draw
				break
			}
			l.install(d, ordered)
			l.scanned = tr
		}
	}
	return errors.Join(errs...)
}

// seed returns the tranche's seed, proposing a fresh one.
func (ev *event) seed(ctx context.Context, l *lane, tr int) ([]byte, error) {
	proposal := make([]byte, SeedSize)
	if _, err := io.ReadFull(ev.e.opts.Rand, proposal); err != nil {
		return nil, err
	}
	return ev.e.opts.Store.Seed(ctx, ev.conf().ID, l.cfg.Name, tr, proposal)
}

// install records a draw and its order in memory.
func (l *lane) install(d Draw, ordered []VisitorID) {
	l.live.grow(d.Next())
	l.claimed.grow(d.Next())
	l.usedHere.grow(d.Next())
	l.skipped.grow(d.Next())
	l.mu.Lock()
	l.draws[d.Tranche] = &drawnTranche{draw: d, ordered: ordered}
	l.drawList = append(l.drawList, d)
	if n, ok := l.undrawn[d.Tranche]; ok {
		l.nundrawn.Add(-int64(n))
	}
	delete(l.undrawn, d.Tranche)
	l.mu.Unlock()
	if d.Next()-1 > l.last.Load() {
		l.last.Store(d.Next() - 1)
	}
	if int64(d.Tranche) > l.drawnTo.Load() {
		l.drawnTo.Store(int64(d.Tranche))
	}
}

// follow brings this replica up to date with the store: draws (with their
// orders), serving counters, member counts of undrawn tranches.
func (ev *event) follow(ctx context.Context, now time.Time) error {
	s := ev.e.opts.Store
	id := ev.conf().ID
	var errs []error
	for _, l := range ev.lanes {
		draws, err := s.Draws(ctx, id, l.cfg.Name, int(l.drawnTo.Load()))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, d := range draws {
			members, err := s.Members(ctx, id, l.cfg.Name, d.Tranche)
			if err != nil {
				errs = append(errs, err)
				break
			}
			ordered := Order(d.Seed, members)
			if uint64(len(ordered)) != d.Count {
				ev.e.log.Error("admission: a tranche's members do not match its draw record",
					"event", id, "lane", l.cfg.Name, "tranche", d.Tranche, "members", len(ordered), "count", d.Count)
			}
			l.install(d, ordered)
		}
		// Member counts of the tranches waiting for their draw (for ETAs
		// and threshold mode's "anyone queued?"). A tranche closed more
		// than rejoinAfter ago without a draw is not counted: its
		// visitors join the current one when they next poll. Without
		// this bound an event whose queue stays empty (threshold mode,
		// for days) would count every tranche since its last draw at
		// every tick.
		cur := trancheAt(ev.conf(), now)
		from := max(int(l.drawnTo.Load()), ev.floor-1, trancheAt(ev.conf(), now.Add(-rejoinAfter))-1) + 1
		counts := map[int]int{}
		for tr := from; tr <= cur && !now.Before(ev.conf().QueueOpensAt); tr++ {
			n, err := s.MemberCount(ctx, id, l.cfg.Name, tr)
			if err != nil {
				errs = append(errs, err)
				break
			}
			if n > 0 {
				counts[tr] = n
			}
		}
		total := 0
		for _, n := range counts {
			total += n
		}
		l.mu.Lock()
		l.undrawn = counts
		l.mu.Unlock()
		l.nundrawn.Store(int64(total))
	}
	serving, err := s.Serving(ctx, id)
	if err != nil {
		return errors.Join(append(errs, err)...)
	}
	// The estimator only sees selling time: a pause would drag the rate
	// (and so every ETA) down with zeros that say nothing about the pace
	// after it.
	selling := ev.state(now).admitting()
	for _, l := range ev.lanes {
		l.observe(serving[l.cfg.Name], now, selling)
	}
	return errors.Join(errs...)
}

// observe notes the lane's serving counter as read now and feeds the rate
// estimator while the event is selling.
func (l *lane) observe(v uint64, now time.Time, selling bool) {
	l.bump(v, now)
	var lo, mid, hi float64
	if selling {
		if !l.estReady {
			l.estSeen, l.estReady = v, true // what came before is history
		}
		advanced := uint64(0)
		if v > l.estSeen {
			advanced = v - l.estSeen
			l.estSeen = v
		}
		l.est.Observe(now, advanced)
		lo, mid, hi = l.est.Rates()
	}
	l.measured.Store(mid > 0)
	if !(mid > 0) {
		observed := 0.0
		if selling {
			observed = l.est.Mean(priorMinSpan)
			if !(observed > 0) {
				// No queue has moved yet (threshold mode): the pace of
				// the last minute's admissions, pass-through included.
				observed = float64(l.event.figures.Load().Admitted1m) / 60 * l.shareOfAdmissions()
			}
		}
		lo, mid, hi = l.priorRates(observed)
	}
	l.rates.Store(&[3]float64{lo, mid, hi})
}

// bump raises the in-memory serving counter and notes when.
func (l *lane) bump(v uint64, now time.Time) {
	if v > l.serving.Load() {
		l.serving.Store(v)
		l.mu.Lock()
		l.reach = append(l.reach, reached{at: now, serving: v})
		l.mu.Unlock()
	}
}
