package admission

// Straight through: a visitor without a pass on a gated path, in
// threshold mode or in the passthrough state. The proxy asks Enter only
// for requests that carry no valid pass, so the admitted path never
// comes here.
//
// In threshold mode the leader grants pass-through slots through the
// store at every tick (Store.GrantSlots): the room the controller leaves
// under its limit, the caps and the max_new_per_minute bucket, and none
// at all while anyone is queued or waiting for a draw. Every replica
// takes slots from the store one at a time (Store.TakeSlot), atomically,
// so a thousand visitors arriving at once on five replicas get exactly
// the granted number of passes between them; the rest queue. The leader
// reads back how many were taken and counts them as admitted.

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"
)

// Gate is what the proxy's gate reads of an event on a request without
// asking the engine: whether gated requests get the maintenance page, and
// whether Enter may let a visitor without a pass through. It follows the
// operator's control on this replica (within a tick of a change on
// another). A Gate is safe for concurrent use.
type Gate struct {
	maint atomic.Bool
	open  atomic.Bool
	// notice is the operator's notice; the pointer changes only when
	// the notice does, so a reader can cache what it made of it.
	notice atomic.Pointer[Notice]
}

// Notice returns the event's notice to visitors (nil: none). The pointer
// stays the same until the notice changes, and what it points to is
// never changed: callers may cache what they derive from it keyed by
// the pointer, and must not change it.
func (g *Gate) Notice() *Notice { return g.notice.Load() }

// Maintenance reports whether gated requests get the maintenance page.
func (g *Gate) Maintenance() bool { return g.maint.Load() }

// MayPass reports whether Enter may let a visitor without a pass straight
// through (threshold mode, or the passthrough state): when false the
// visitor goes to the room without asking.
func (g *Gate) MayPass() bool { return g.open.Load() }

func (g *Gate) update(c *Control, mode Mode) {
	if c.Mode.Valid() {
		mode = c.Mode
	}
	g.maint.Store(c.Maintenance)
	g.open.Store(!c.Maintenance && !c.Closed && !c.SoldOut && (c.Passthrough || mode == ModeThreshold))
	if old := g.notice.Load(); !old.Equal(c.Notice) {
		g.notice.Store(c.Notice.Clone())
	}
}

// Gate returns the event's gate (nil for an unknown event). The pointer
// stays valid while the event is configured; an Apply that removes or
// rebuilds the event ends it (see Apply), so keepers read it again.
func (e *Engine) Gate(id string) *Gate {
	ev := e.lookup(id)
	if ev == nil {
		return nil
	}
	return &ev.gate
}

// slotEmptyFor is how long a replica that found no slot left stops
// asking the store: the leader grants once a tick, so asking again
// sooner mostly finds none again.
const slotEmptyFor = 250 * time.Millisecond

// slotCache remembers on one replica that the slots ran out.
type slotCache struct {
	emptyUntil atomic.Int64 // Unix ns
}

// Enter decides a visitor who came to a gated path without a valid pass:
// it returns a pass (sign it and set it, then forward the request) when
// the visitor may go straight through, or nil when they go to the
// waiting room. In the passthrough state everyone goes through; in
// threshold mode while the event is selling, nobody is queued and a
// pass-through slot is left; in any other case nobody does. binding is
// the device-binding hash the proxy computed. Enter places nobody in a
// queue. An error (ErrStoreDown, ErrUnknownEvent) means the room: the
// gate fails closed.
func (e *Engine) Enter(ctx context.Context, id, binding string) (*Pass, error) {
	ev, err := e.event(id)
	if err != nil {
		return nil, err
	}
	now := e.clock()
	if ok, err := ev.mayEnter(ctx, now); !ok || err != nil {
		return nil, err
	}
	v, err := ev.newVisitor(false)
	if err != nil {
		return nil, fmt.Errorf("admission: no randomness: %w", err)
	}
	return ev.straightPass(v, binding, now), nil
}

// mayEnter decides whether a visitor may go straight through now, taking
// a pass-through slot in threshold mode (see Enter).
func (ev *event) mayEnter(ctx context.Context, now time.Time) (bool, error) {
	if !ev.gate.MayPass() {
		return false, nil
	}
	switch st := ev.state(now); {
	case st == StatePassthrough:
		return true, nil
	case st != StateSelling || ev.mode() != ModeThreshold:
		return false, nil
	}
	if ev.queued() || now.UnixNano() < ev.slots.emptyUntil.Load() {
		return false, nil
	}
	ok, err := ev.e.opts.Store.TakeSlot(ctx, ev.conf().ID)
	if err != nil {
		return false, fmt.Errorf("%w: %v", ErrStoreDown, err)
	}
	if !ok {
		ev.slots.emptyUntil.Store(now.Add(slotEmptyFor).UnixNano())
	}
	return ok, nil
}

// straightPass is the pass of visitor v let straight through at now: a
// session from now, in the public lane, without a queue number.
func (ev *event) straightPass(v VisitorID, binding string, now time.Time) *Pass {
	ev.passed.Add(1)
	ev.minted.Add(1)
	return &Pass{ID: NewPassIDFor(v), Event: ev.conf().ID, Visitor: v, Lane: PublicLane, Binding: binding,
		IssuedAt: now, ExpiresAt: now.Add(ev.conf().SessionDuration), AdmittedAt: now.Truncate(time.Second)}
}

// queued reports whether this replica knows of anyone waiting: drawn and
// not reached, or in a tranche not drawn yet.
func (ev *event) queued() bool {
	for _, l := range ev.lanes {
		if l.last.Load() > l.serving.Load() || l.nundrawn.Load() > 0 {
			return true
		}
	}
	return false
}

// closeGrant closes the last pass-through grant, returning how many of
// its slots were taken; the new grant is made by regrant once the
// controller has decided.
func (ev *event) closeGrant(ctx context.Context) (int, error) {
	return ev.e.opts.Store.GrantSlots(ctx, ev.conf().ID, 0, ev.grantTTL())
}

// regrant grants n pass-through slots until the next tick (or a few, if
// this leader dies).
func (ev *event) regrant(ctx context.Context, n int) error {
	_, err := ev.e.opts.Store.GrantSlots(ctx, ev.conf().ID, n, ev.grantTTL())
	if err == nil && n > 0 {
		ev.slots.emptyUntil.Store(0)
	}
	return err
}

// grantTTL is how long a grant lasts without the next one.
func (ev *event) grantTTL() time.Duration { return 3 * ev.conf().Controller.Tick }
