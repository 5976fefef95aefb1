package admission

import (
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"time"
)

// ErrLiveChange is returned by Apply for a change that cannot be made to
// an event whose queue has opened (see Apply).
var ErrLiveChange = errors.New("admission: cannot change a running event's queue")

// Applied says what Apply changed: the ids of the events added, changed
// (their configuration differs) and removed, each sorted.
type Applied struct {
	Added   []string `json:"added"`
	Changed []string `json:"changed"`
	Removed []string `json:"removed"`
}

// Apply makes cfgs the engine's whole event set, in place, while ticks,
// joins and status polls go on. cfgs is the effective list (the file's
// events, or those overlaid by records made at run time); every event
// not in it is removed.
//
// It is all or nothing: every configuration is normalized and checked
// first, and on any problem (an invalid configuration, an id given
// twice, a change ErrLiveChange forbids) Apply changes nothing and
// returns every problem, joined.
//
//   - An added event starts as New would start it: it follows what the
//     store holds of it (an event removed and added again resumes its
//     queue), and ticks from Run's next tick.
//   - A removed event is forgotten by this replica at once: statuses,
//     joins, passes and Gate for it answer ErrUnknownEvent (Gate nil),
//     so a route gated by it fails closed. Its data in the store is left
//     alone. A tick already running for it finishes.
//   - An unchanged event is not touched.
//   - A changed event keeps its state: lanes, queue numbers, serving
//     counters, draws, tickets and passes issued (they stay valid),
//     operator control, and the controller with its measurements, limit
//     and target. The new configuration is installed at once (statuses
//     and joins use its times and durations from then on) and the
//     controller and the draws use it from the event's next tick (its
//     caps, controller settings, visitors per seat, inventory link).
//     Once its queue has opened (now at or after its queue_opens_at, or
//     open from the start) its schedule (queue_opens_at, on_sale_at),
//     tranche length and lanes cannot change: queue numbers and tranches
//     are derived from them. Before that the event is rebuilt with the
//     new configuration, keeping the operator's control; its Gate is
//     then a new one.
//
// Apply returns what it changed. It is safe for concurrent use with
// every other method; concurrent Applys are serialised. Callers that
// keep Gate pointers read them again after an Apply.
func (e *Engine) Apply(cfgs []EventConfig) (Applied, error) {
	e.applyMu.Lock()
	defer e.applyMu.Unlock()
	now := e.clock()
	cur := e.all()
	next := make(map[string]EventConfig, len(cfgs))
	var errs []error
	for i, cfg := range cfgs {
		n, err := normalize(cfg)
		if err != nil {
			errs = append(errs, fmt.Errorf("events[%d]: %w", i, err))
			continue
		}
		if _, dup := next[n.ID]; dup {
			errs = append(errs, fmt.Errorf("events[%d]: admission: event %q configured twice", i, n.ID))
			continue
		}
		next[n.ID] = n
		if ev := cur[n.ID]; ev != nil {
			if err := liveChange(ev.conf(), &n, now); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if len(errs) > 0 {
		return Applied{}, errors.Join(errs...)
	}

	var res Applied
	set := make(map[string]*event, len(next))
	var tuned []*event // changed in place: their controllers follow below
	for id, cfg := range next {
		ev := cur[id]
		switch {
		case ev == nil:
			set[id] = newEvent(e, cfg)
			res.Added = append(res.Added, id)
		case sameConfig(ev.conf(), &cfg):
			set[id] = ev
		case sameQueue(ev.conf(), &cfg):
			ev.cfgp.Store(&cfg)
			set[id] = ev
			tuned = append(tuned, ev)
			res.Changed = append(res.Changed, id)
		default: // not opened yet (liveChange passed): rebuilt
			nev := newEvent(e, cfg)
			nev.setControl(ev.control.Load())
			nev.revoked.Store(ev.revoked.Load())
			nev.bars.Store(ev.bars.Load())
			set[id] = nev
			res.Changed = append(res.Changed, id)
		}
	}
	for id := range cur {
		if _, ok := next[id]; !ok {
			res.Removed = append(res.Removed, id)
		}
	}
	e.events.Store(&set)
	for _, ev := range tuned {
		ev.retune()
	}
	slices.Sort(res.Added)
	slices.Sort(res.Changed)
	slices.Sort(res.Removed)
	select {
	case e.wake <- struct{}{}:
	default:
	}
	return res, nil
}

// retune brings the parts of a changed event that are derived from its
// configuration up to date: the controller's settings and the gate's
// mode. It waits for a tick in progress.
func (ev *event) retune() {
	ev.tickMu.Lock()
	defer ev.tickMu.Unlock()
	cfg := ev.conf()
	ev.ctrl.Reconfigure(cfg.Controller, cfg.VisitorsPerSeat)
	ev.gate.update(ev.control.Load(), cfg.Mode)
}

// liveChange reports a change to old that the event's open queue
// forbids (see Apply).
func liveChange(old, cfg *EventConfig, now time.Time) error {
	if !old.openFromStart && now.Before(old.QueueOpensAt) {
		return nil // not open: anything may change
	}
	var what []string
	if old.openFromStart != cfg.openFromStart || !old.QueueOpensAt.Equal(cfg.QueueOpensAt) {
		what = append(what, "queue_opens_at")
	}
	if old.openFromStart != cfg.openFromStart || !old.OnSaleAt.Equal(cfg.OnSaleAt) {
		what = append(what, "on_sale_at")
	}
	if old.Tranche != cfg.Tranche {
		what = append(what, "tranche")
	}
	if !sameLanes(old.Lanes, cfg.Lanes) {
		what = append(what, "lanes")
	}
	if len(what) == 0 {
		return nil
	}
	return fmt.Errorf("%w: event %s: its queue is open, so %s cannot change (restart to change them)",
		ErrLiveChange, old.ID, strings.Join(what, ", "))
}

// sameQueue reports whether a and b number their queue alike: same
// schedule, tranche and lanes.
func sameQueue(a, b *EventConfig) bool {
	return a.openFromStart == b.openFromStart && a.QueueOpensAt.Equal(b.QueueOpensAt) &&
		a.OnSaleAt.Equal(b.OnSaleAt) && a.Tranche == b.Tranche && sameLanes(a.Lanes, b.Lanes)
}

// sameConfig reports whether a and b are the same configuration (times
// compared as instants, whatever their zone).
func sameConfig(a, b *EventConfig) bool {
	if !sameQueue(a, b) || !a.ClosesAt.Equal(b.ClosesAt) {
		return false
	}
	x, y := *a, *b
	x.QueueOpensAt, x.OnSaleAt, x.ClosesAt, x.Lanes = time.Time{}, time.Time{}, time.Time{}, nil
	y.QueueOpensAt, y.OnSaleAt, y.ClosesAt, y.Lanes = time.Time{}, time.Time{}, time.Time{}, nil
	return reflect.DeepEqual(x, y)
}

// sameLanes compares lanes by content (an allowlist loaded twice from
// the same file is the same allowlist).
func sameLanes(a, b []LaneConfig) bool {
	return slices.EqualFunc(a, b, func(x, y LaneConfig) bool {
		return x.Name == y.Name && x.Priority == y.Priority && x.Share == y.Share &&
			slices.Equal(x.Access.InviteSecret, y.Access.InviteSecret) &&
			slices.Equal(x.Access.AccountSecret, y.Access.AccountSecret) &&
			sameAllowlist(x.Access.Allowlist, y.Access.Allowlist)
	})
}

func sameAllowlist(a, b *Allowlist) bool {
	if a == nil || b == nil {
		return a == b
	}
	return maps.Equal(a.exact, b.exact)
}

// tickEvery is the shortest tick interval of the events (an hour when
// there are none).
func (e *Engine) tickEvery() time.Duration {
	tick := time.Hour
	for _, ev := range e.all() {
		tick = min(tick, ev.conf().Controller.Tick)
	}
	return tick
}
