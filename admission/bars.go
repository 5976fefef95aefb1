package admission

import (
	"context"
	"fmt"
	"maps"
	"time"
)

// Visitor bars: revocations of a visitor, and visitors who are done. A
// bar is written to the store, so every replica honours it from its next
// tick on; the replica that made it honours it at once. The gate reads
// the bars from memory (PassRevoked), never from the store.

// known returns v's bar as the in-memory set has it: every bar read from
// the store and every revocation made here, but not the completions made
// here since the last tick (their passes work for a grace anyway). It
// takes no lock: the gate and every status poll ask it.
func (ev *event) known(v VisitorID) (VisitorBar, bool) {
	b, ok := (*ev.bars.Load())[v]
	return b, ok
}

// barred returns v's bar, if v is barred (whatever its From: no new pass
// is minted for a barred visitor), including completions made here that
// the store has not taken yet. Asked before minting a pass.
func (ev *event) barred(v VisitorID) (VisitorBar, bool) {
	if b, ok := ev.known(v); ok {
		return b, true
	}
	if ev.npending.Load() == 0 {
		return VisitorBar{}, false
	}
	ev.pendMu.Lock()
	b, ok := ev.pending[v]
	ev.pendMu.Unlock()
	return b, ok
}

// addBars merges bars into the in-memory set (copy on write: bars made
// on this replica are rare next to the gate's reads of them).
func (ev *event) addBars(bars ...VisitorBar) {
	ev.tickMu.Lock()
	defer ev.tickMu.Unlock()
	m := maps.Clone(*ev.bars.Load())
	for _, b := range bars {
		if old, ok := m[b.Visitor]; ok {
			b = old.Merge(b)
		}
		m[b.Visitor] = b
	}
	ev.bars.Store(&m)
}

// refreshBars writes the bars made here to the store and reads back every
// bar in force. Called from tick, with tickMu held.
func (ev *event) refreshBars(ctx context.Context, now time.Time) {
	s := ev.e.opts.Store
	var flush []VisitorBar
	if ev.npending.Load() > 0 {
		ev.pendMu.Lock()
		flush = make([]VisitorBar, 0, len(ev.pending))
		for _, b := range ev.pending {
			flush = append(flush, b)
		}
		ev.pendMu.Unlock()
		if err := s.BarVisitors(ctx, ev.conf().ID, flush); err != nil {
			ev.e.log.Warn("admission: recording visitor bars failed; retrying at the next tick",
				"event", ev.conf().ID, "bars", len(flush), "err", err)
			flush = nil
		}
	}
	list, err := s.VisitorBars(ctx, ev.conf().ID)
	if err != nil {
		return // keep what we have; the next tick tries again
	}
	m := make(map[VisitorID]VisitorBar, len(list))
	for _, b := range list {
		m[b.Visitor] = b
	}
	ev.pendMu.Lock()
	for _, b := range flush {
		// Written: the store's list has it now, unless it changed since.
		if cur, ok := ev.pending[b.Visitor]; ok && cur == b {
			delete(ev.pending, b.Visitor)
		}
	}
	for v, b := range ev.pending {
		if !now.Before(b.Until) {
			delete(ev.pending, v)
			continue
		}
		if old, ok := m[v]; ok {
			b = old.Merge(b)
		}
		m[v] = b
	}
	ev.npending.Store(int32(len(ev.pending)))
	ev.pendMu.Unlock()
	ev.bars.Store(&m)
}

// barUntil is how long a bar made at now must be kept: until no ticket
// of the event can still be valid, for a visitor barred while queued;
// turns end a grace and a session after they start, and a pass renewed
// by activity lives at most MaxSession.
func (ev *event) barUntil(now time.Time) time.Time {
	if !ev.conf().ClosesAt.IsZero() {
		return ev.conf().ClosesAt.Add(ev.conf().NoShowGrace + ev.conf().MaxSession)
	}
	return now.Add(ticketLifetime + ev.conf().NoShowGrace + ev.conf().MaxSession)
}

// RevokeVisitor bars visitor v of an event: their status polls mint no
// pass from now on, and their passes stop working, on this replica at
// once and on every replica within a tick. It returns the bar recorded.
// Whether v is known to the event is the caller's question (Known).
func (e *Engine) RevokeVisitor(ctx context.Context, id string, v VisitorID) (VisitorBar, error) {
	ev, err := e.event(id)
	if err != nil {
		return VisitorBar{}, err
	}
	now := e.clock()
	b := VisitorBar{Visitor: v, From: now, Until: ev.barUntil(now), Reason: BarRevoked}
	if err := e.opts.Store.BarVisitors(ctx, id, []VisitorBar{b}); err != nil {
		return VisitorBar{}, fmt.Errorf("%w: %v", ErrStoreDown, err)
	}
	ev.addBars(b)
	return b, nil
}

// Complete records that visitor v's origin said they are done (a
// purchase completed): no status poll mints them a pass from now on, and
// their passes stop working after the event's CompleteGrace. This replica
// honours it at once; it is written to the store at the next tick, for
// the others. It does no I/O, so it may be called on the request path.
func (e *Engine) Complete(id string, v VisitorID) {
	ev := e.lookup(id)
	if ev == nil {
		return
	}
	now := e.clock()
	from := now.Add(ev.conf().CompleteGrace)
	// The visitor has a pass, so their turn ends within a session.
	b := VisitorBar{Visitor: v, From: from, Until: from.Add(ev.conf().NoShowGrace + ev.conf().SessionDuration), Reason: BarCompleted}
	ev.pendMu.Lock()
	if old, ok := ev.pending[v]; ok {
		b = old.Merge(b)
	}
	ev.pending[v] = b
	ev.npending.Store(int32(len(ev.pending)))
	ev.pendMu.Unlock()
}

// PassRevoked reports whether a (verified) pass of an event no longer
// admits: its id is revoked, or its visitor is barred and the bar has
// started. It reads memory only, takes no lock and allocates nothing. A
// completion stops the pass at the first tick after its grace.
func (e *Engine) PassRevoked(id string, p *Pass) bool {
	ev := e.lookup(id)
	if ev == nil {
		return false
	}
	// The clock is read only on a hit: the gate asks this of every
	// admitted request, and almost none is revoked.
	if until, ok := (*ev.revoked.Load())[p.ID]; ok && e.clock().Before(until) {
		return true
	}
	b, ok := ev.known(p.Visitor)
	if !ok {
		return false
	}
	now := e.clock()
	return !now.Before(b.From) && now.Before(b.Until)
}

// Barred returns visitor v's bar in an event, if they are barred.
func (e *Engine) Barred(id string, v VisitorID) (VisitorBar, bool) {
	ev := e.lookup(id)
	if ev == nil {
		return VisitorBar{}, false
	}
	return ev.barred(v)
}

// Known reports whether v joined the event: a member of a drawn tranche
// (looked up in memory) or of a tranche not drawn yet (read from the
// store). It is for operators (it may read a whole tranche), not for the
// request path.
func (e *Engine) Known(ctx context.Context, id string, v VisitorID) (bool, error) {
	ev, err := e.event(id)
	if err != nil {
		return false, err
	}
	now := e.clock()
	if now.Before(ev.conf().QueueOpensAt) {
		return false, nil
	}
	cur := trancheAt(ev.conf(), now)
	for _, l := range ev.lanes {
		// Drawn tranches are searched in memory; those not drawn yet (and
		// a drawn one whose order is still loading) are read. A tranche
		// before the last drawn one without a record was empty: a join
		// that raced its close was placed again in a later one.
		var unknown []int
		drawnTo := int(l.drawnTo.Load())
		l.mu.RLock()
		for tr, d := range l.draws {
			if d.ordered == nil {
				unknown = append(unknown, tr)
				continue
			}
			if Find(d.draw.Seed, d.ordered, v) >= 0 {
				l.mu.RUnlock()
				return true, nil
			}
		}
		l.mu.RUnlock()
		for tr := max(drawnTo+1, 0); tr <= cur; tr++ {
			unknown = append(unknown, tr)
		}
		for _, tr := range unknown {
			members, err := e.opts.Store.Members(ctx, id, l.cfg.Name, tr)
			if err != nil {
				return false, fmt.Errorf("%w: %v", ErrStoreDown, err)
			}
			for _, m := range members {
				if m == v {
					return true, nil
				}
			}
		}
	}
	return false, nil
}
