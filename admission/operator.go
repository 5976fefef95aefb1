package admission

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"
)

// DrawAudit is the public record of one lane's tranche draw.
type DrawAudit struct {
	Event   string
	Lane    string
	Tranche int
	// Commitment is SHA-256 of the seed, published while the tranche is open.
	Commitment [32]byte
	// Drawn tells whether the tranche has been drawn; Seed, First, Count
	// and Hashes are set only then.
	Drawn bool
	Seed  []byte
	First uint64
	Count uint64
	// Offset is the index of Hashes[0] in the drawn order; Hashes are the
	// SHA-256 of the visitor ids, in drawn order.
	Offset int
	Hashes [][32]byte
	// Opens and Closes are when the tranche took members: Opens is zero
	// for the pre-queue (tranche 0, which takes everyone who arrives
	// before the on-sale), Closes is when it was or will be drawn.
	Opens, Closes time.Time
	// CommittedFrom is when the commitment was first published: the audit
	// serves a tranche's commitment from the moment the tranche before it
	// opens (the queue's opening for the pre-queue and the first tranche
	// after it), so always before the tranche closes.
	CommittedFrom time.Time
	// DrawnAt is when the draw was made (zero until it is).
	DrawnAt time.Time
}

// trancheTimes fills in when tranche k of cfg opened, closes, and since
// when its commitment has been served.
func (a *DrawAudit) trancheTimes(cfg *EventConfig, k int) {
	a.Closes = trancheCloses(cfg, k)
	if k > 0 {
		a.Opens = trancheCloses(cfg, k-1)
	}
	a.CommittedFrom = cfg.QueueOpensAt
	if k >= 2 {
		a.CommittedFrom = trancheCloses(cfg, k-2)
	}
}

// Audit returns the public record of a lane's tranche: the seed's
// commitment, and once drawn the seed and a page of SHA-256(visitor id)
// in drawn order.
func (e *Engine) Audit(ctx context.Context, id, laneName string, tranche, offset, limit int) (DrawAudit, error) {
	ev, err := e.event(id)
	if err != nil {
		return DrawAudit{}, err
	}
	l := ev.byName[laneName]
	if l == nil {
		return DrawAudit{}, fmt.Errorf("%w: %q", ErrUnknownLane, laneName)
	}
	now := e.clock()
	if tranche < 0 || tranche > trancheAt(ev.conf(), now)+1 || now.Before(ev.conf().QueueOpensAt) {
		return DrawAudit{}, ErrNotDrawnYet
	}
	a := DrawAudit{Event: id, Lane: laneName, Tranche: tranche, Offset: offset}
	a.trancheTimes(ev.conf(), tranche)
	l.mu.RLock()
	d := l.draws[tranche]
	l.mu.RUnlock()
	if d == nil || d.ordered == nil {
		seed, err := ev.seed(ctx, l, tranche)
		if err != nil {
			return DrawAudit{}, fmt.Errorf("%w: %v", ErrStoreDown, err)
		}
		a.Commitment = Commitment(seed)
		return a, nil
	}
	a.Commitment, a.Drawn, a.Seed, a.First, a.Count = Commitment(d.draw.Seed), true, d.draw.Seed, d.draw.First, d.draw.Count
	a.DrawnAt = d.draw.At
	if offset < 0 {
		offset = 0
	}
	end := min(len(d.ordered), offset+max(0, limit))
	for i := offset; i < end; i++ {
		a.Hashes = append(a.Hashes, VisitorHash(d.ordered[i]))
	}
	return a, nil
}

// Revoke bars a pass until its expiry, on every replica within a tick.
func (e *Engine) Revoke(ctx context.Context, id, passID string, until time.Time) error {
	ev, err := e.event(id)
	if err != nil {
		return err
	}
	if err := e.opts.Store.Revoke(ctx, id, passID, until); err != nil {
		return fmt.Errorf("%w: %v", ErrStoreDown, err)
	}
	ev.tickMu.Lock()
	defer ev.tickMu.Unlock()
	rv := maps.Clone(*ev.revoked.Load())
	rv[passID] = until
	ev.revoked.Store(&rv)
	return nil
}

// Revoked reports whether a pass is revoked.
func (e *Engine) Revoked(id, passID string) bool {
	ev := e.lookup(id)
	if ev == nil {
		return false
	}
	until, ok := (*ev.revoked.Load())[passID]
	return ok && e.clock().Before(until)
}

// SetControl stores an operator's overrides; every replica follows within
// a tick.
func (e *Engine) SetControl(ctx context.Context, id string, c Control) error {
	ev, err := e.event(id)
	if err != nil {
		return err
	}
	if err := c.check(); err != nil {
		return err
	}
	if err := e.opts.Store.SetControl(ctx, id, c); err != nil {
		return fmt.Errorf("%w: %v", ErrStoreDown, err)
	}
	ev.setControl(&c)
	return nil
}

// UpdateControl changes an operator's overrides in one read-modify-write:
// fn gets the current control and edits it; the result is stored as by
// SetControl and returned. Concurrent updates of one event on this
// replica are serialised, so "pause" and "set caps" do not undo each
// other.
func (e *Engine) UpdateControl(ctx context.Context, id string, fn func(c *Control)) (Control, error) {
	ev, err := e.event(id)
	if err != nil {
		return Control{}, err
	}
	ev.controlMu.Lock()
	defer ev.controlMu.Unlock()
	c := *ev.control.Load()
	if c.Caps != nil {
		caps := *c.Caps
		c.Caps = &caps
	}
	c.Notice = c.Notice.Clone()
	fn(&c)
	if err := c.check(); err != nil {
		return Control{}, err
	}
	if err := e.opts.Store.SetControl(ctx, id, c); err != nil {
		return Control{}, fmt.Errorf("%w: %v", ErrStoreDown, err)
	}
	ev.setControl(&c)
	return c, nil
}

// check reports an operator's overrides the engine cannot apply.
func (c *Control) check() error {
	if c.Mode != "" && !c.Mode.Valid() {
		return fmt.Errorf("%w: unknown mode %q", ErrBadControl, c.Mode)
	}
	if c.Notice != nil {
		if err := c.Notice.Check(); err != nil {
			return fmt.Errorf("%w: notice: %w", ErrBadControl, err)
		}
	}
	return nil
}

// NextTick returns when the event's controller next runs, taking the
// operator's control as it is by then (caps set now bind from that
// tick): on the leader the time its next tick is due, on a follower
// (which cannot know the leader's phase) now plus one tick interval,
// which bounds it.
func (e *Engine) NextTick(id string) (time.Time, error) {
	ev, err := e.event(id)
	if err != nil {
		return time.Time{}, err
	}
	now := e.clock()
	every := time.Duration(e.every.Load())
	if every <= 0 {
		every = ev.conf().Controller.Tick
	}
	last := ev.lastTick.Load()
	if !ev.leader.Load() || last == 0 {
		return now.Add(every), nil
	}
	next := time.Unix(0, last).Add(every)
	if next.Before(now) {
		return now, nil // a tick is due or under way: it reads the control first
	}
	return next, nil
}

// Control returns an event's current operator overrides.
func (e *Engine) Control(id string) (Control, error) {
	ev, err := e.event(id)
	if err != nil {
		return Control{}, err
	}
	return *ev.control.Load(), nil
}

// State returns an event's state now, as this replica's control says
// (an operator's change made here shows at once; Figures' state is as of
// the last tick). It is "" for an unknown event.
func (e *Engine) State(id string) State {
	ev, err := e.event(id)
	if err != nil {
		return ""
	}
	return ev.state(e.clock())
}

// Mode returns the mode in force for an event: the operator's, else the
// configured one ("" for an unknown event).
func (e *Engine) Mode(id string) Mode {
	ev, err := e.event(id)
	if err != nil {
		return ""
	}
	return ev.mode()
}

// Queueing reports whether visitors without a pass go to the waiting room
// now (see Figures.Queueing).
func (e *Engine) Queueing(id string) bool {
	ev, err := e.event(id)
	if err != nil {
		return true
	}
	return ev.queueing(ev.state(e.clock()))
}

// Config returns an event's configuration, defaults filled in.
func (e *Engine) Config(id string) (EventConfig, error) {
	ev, err := e.event(id)
	if err != nil {
		return EventConfig{}, err
	}
	return *ev.conf(), nil
}

// Lease returns how long an event's leadership lasts without renewal: a
// leader that dies is replaced within it (0 for an unknown event).
func (e *Engine) Lease(id string) time.Duration {
	ev, err := e.event(id)
	if err != nil {
		return 0
	}
	return ev.lease()
}

// lease is the event's lease length: Options.Lease, at least
// minLeaseTicks ticks.
func (ev *event) lease() time.Duration {
	return max(ev.e.opts.Lease, minLeaseTicks*ev.conf().Controller.Tick)
}

// Events lists the configured events' ids.
func (e *Engine) Events() []string {
	ids := make([]string, 0, len(e.all()))
	for id := range e.all() {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}
