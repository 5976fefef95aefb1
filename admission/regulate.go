package admission

import (
	"context"
	"math"
	"slices"
	"sort"
	"time"
)

// Figures are an event's live figures, for operators and the simulator.
type Figures struct {
	Event      string
	State      State
	Leader     bool
	Limit      int
	Admitted1m int
	// NoShowRate is the share of the numbers offered (the serving
	// counter passed them) between a minute and the no-show grace before
	// the last tick whose pass was never used: no request carrying it
	// went through the gate, on any replica. A visitor who never came
	// for their turn and one who took the pass and never came are both
	// no-shows; one who comes late stops being one while their offer is
	// in the window. Pending counts the numbers offered within the grace
	// whose pass has not been used yet, taken or not. Both are the
	// leader's.
	NoShowRate float64
	Pending    int
	// Unarrived counts the visitors admitted who have not come yet and
	// still may: numbers offered within the grace whose pass was not
	// used, and passes minted and not used that have not run out. They
	// count against max_active (the leader's; 0 on a follower).
	Unarrived int
	// Replicas is how many replicas' samples the leader's controller
	// decided on at its last tick; Minted and Redeemed sum their passes
	// minted and first used since each started (0 with a Meter that is
	// not a Sampler, and on a follower).
	Replicas         int
	Minted, Redeemed uint64
	// UsesDropped counts the first uses of passes that this replica
	// could not take for the store (its buffer was full, see
	// Engine.NoteUse); each is tried again at the pass's next request.
	UsesDropped int64
	// Mode is the mode in force (the operator's or the configured one).
	Mode Mode
	// Queueing tells whether visitors without a pass go to the room;
	// false while they may pass straight through (threshold mode while
	// selling with nobody queued, or the passthrough state). Slots is
	// the pass-through grant of the leader's last tick.
	Queueing bool
	Slots    int
	// PassedThrough counts the visitors let straight through on this
	// replica since it started.
	PassedThrough int64
	Last          Measurements
	Lanes         map[string]LaneFigures
	// Decision is the controller's decision at the leader's last tick;
	// zero (At.IsZero()) when the controller did not run at it (this
	// replica does not lead, or the event is not selling). Engine.Decisions
	// has the recent ones.
	Decision Decision
}

// LaneFigures are one lane's live figures.
type LaneFigures struct {
	Serving uint64 // numbers admitted so far
	Drawn   uint64 // numbers given out so far
	Waiting uint64 // drawn numbers not yet reached
	Undrawn int    // members of tranches not drawn yet
	// Rates are the admission rate estimates (numbers per second).
	RateLow, RateMid, RateHigh float64
}

// regulate runs the controller and raises the serving counters.
func (ev *event) regulate(ctx context.Context, now time.Time) error {
	s := ev.e.opts.Store
	id := ev.conf().ID
	if !ev.restored {
		if b, err := s.LoadController(ctx, id); err == nil && b != nil {
			if err := ev.ctrl.RestoreState(b); err != nil {
				ev.e.log.Warn("admission: discarding unreadable controller state", "event", id, "err", err)
			}
		}
		ev.restored = true
	}
	st := ev.state(now)
	if st == StatePassthrough {
		return ev.letThrough(ctx, now)
	}
	threshold := ev.mode() == ModeThreshold
	if st != StateSelling {
		if threshold {
			_, err := ev.closeGrant(ctx) // nobody passes while not selling
			return err
		}
		return nil
	}
	taken := 0
	if threshold {
		n, err := ev.closeGrant(ctx)
		if err != nil {
			return err
		}
		taken = n
	}
	// Pass uses before samples: a replica that ticks in between moves a
	// visitor from unarrived to active in both, and read in this order
	// the visitor counts twice for a tick rather than not at all.
	pending, arriving, rate, err := ev.pendingAndNoShows(ctx, now)
	if err != nil {
		return err
	}
	m, cf, err := ev.measure(ctx, now)
	if err != nil {
		return err
	}
	ev.noteMeasured(m, cf)
	remaining, known := 0, false
	if ev.e.opts.Inventory != nil && ev.conf().InventoryEvent != "" {
		remaining, known = ev.e.opts.Inventory.Remaining(ev.conf().InventoryEvent)
	}
	cutoff := now.Add(-time.Minute)
	ev.admits = slices.DeleteFunc(ev.admits, func(a admitted) bool { return !a.at.After(cutoff) })
	last := 0
	for _, a := range ev.admits {
		last += a.n
	}
	waiting := 0
	for _, l := range ev.lanes {
		waiting += int(l.last.Load() - min(l.last.Load(), l.serving.Load()))
	}
	queued := ev.queued()
	out := ev.ctrl.Step(ControllerInput{Now: now, Measurements: m, Pending: pending, NoShowRate: rate,
		Arriving: arriving.pending, ArrivingOffered: arriving.offered, ArrivingKnown: true,
		Lately: arriving.latePending, LatelyOffered: arriving.lateOffered, Unarrived: arriving.unarrived,
		Remaining: remaining, RemainingKnown: known, Caps: ev.caps(), AdmittedLastMinute: last,
		Waiting: waiting, WaitingKnown: true, PassThrough: threshold && !queued, Taken: taken})
	if taken > 0 {
		ev.admits = append(ev.admits, admitted{at: now, n: taken})
	}
	ev.decide(&out.Decision, now)
	ev.noteDecided(&out.Decision)
	f := *ev.figures.Load()
	f.Limit, f.NoShowRate, f.Pending, f.Last, f.Admitted1m = out.Limit, rate, pending, m, last+taken
	f.Slots, f.Decision = out.Slots, out.Decision
	f.Replicas, f.Minted, f.Redeemed, f.Unarrived = cf.replicas, cf.minted, cf.redeemed, arriving.unarrived
	ev.figures.Store(&f)
	if out.SoldOut {
		c := *ev.control.Load()
		if !c.SoldOut {
			c.SoldOut = true
			if err := s.SetControl(ctx, id, c); err != nil {
				return err
			}
			ev.setControl(&c)
		}
		return nil
	}
	if out.Admit > 0 {
		let := 0 // counted against MaxNewPerMinute: arrivals, not no-show inflation
		for l, n := range ev.split(out.Admit) {
			k, err := ev.advance(ctx, l, n, rate, cf.replicas <= 1, now)
			if err != nil {
				return err
			}
			if k > 0 {
				let += n
			}
		}
		if let > 0 {
			ev.admits = append(ev.admits, admitted{at: now, n: let})
		}
	}
	if out.Slots > 0 {
		if err := ev.regrant(ctx, out.Slots); err != nil {
			return err
		}
	}
	return s.SaveController(ctx, id, ev.ctrl.MarshalState())
}

// letThrough runs a tick of the passthrough state: everyone queued is
// reached at once (the serving counters go to the last number drawn),
// and the controller does not run; visitors without a pass go straight
// through at the gate (Enter).
func (ev *event) letThrough(ctx context.Context, now time.Time) error {
	for _, l := range ev.lanes {
		last := l.last.Load()
		if last <= l.serving.Load() {
			continue
		}
		v, err := ev.e.opts.Store.Advance(ctx, ev.conf().ID, l.cfg.Name, last)
		if err != nil {
			return err
		}
		// No offer is recorded: those let through here say nothing of
		// the no-show rate once the queue admits at its pace again.
		l.bump(v, now)
	}
	f := *ev.figures.Load()
	f.Slots = 0
	ev.figures.Store(&f)
	return nil
}

// split shares n admissions between the lanes that have visitors waiting:
// priority lanes first, in order, then the rest by share.
func (ev *event) split(n int) map[*lane]int {
	out := map[*lane]int{}
	var shared []*lane
	total := 0.0
	for _, l := range ev.lanes {
		waiting := int(l.last.Load() - l.serving.Load())
		if waiting <= 0 {
			continue
		}
		if l.cfg.Priority {
			k := min(n, waiting)
			out[l] += k
			n -= k
			continue
		}
		shared = append(shared, l)
		total += l.cfg.Share
	}
	// Largest remainder over the shares, then hand what a lane cannot use
	// to the others.
	for n > 0 && len(shared) > 0 {
		given := 0
		for _, l := range shared {
			k := int(math.Round(float64(n) * l.cfg.Share / total))
			k = min(k, int(l.last.Load()-l.serving.Load())-out[l])
			if k > 0 {
				out[l] += k
				given += k
			}
		}
		if given == 0 {
			for _, l := range shared {
				if int(l.last.Load()-l.serving.Load())-out[l] > 0 {
					out[l]++
					given++
					break
				}
			}
		}
		if given == 0 {
			break
		}
		n -= given
		shared = slices.DeleteFunc(shared, func(l *lane) bool { return int(l.last.Load()-l.serving.Load())-out[l] <= 0 })
		total = 0
		for _, l := range shared {
			total += l.cfg.Share
		}
	}
	return out
}

// advance raises a lane's serving counter so that about n visitors who
// are still around get their turn: with alone (this replica's samples are
// the only ones in force), numbers whose visitor polled before but not
// within the grace are passed over (they count as no-shows at once), and
// the rest is inflated by the measured no-show rate. It returns how many
// numbers were offered.
//
// Liveness is this replica's: it sees only the polls its load balancer
// sends it. With several replicas a visitor who never polled here, or not
// lately, may be polling another, and passing them over would admit
// another in their place while they still come within their grace (the
// cap exceeded threefold at the end of a long sale over three sticky
// replicas). So with several replicas nothing is passed over: the
// measured no-show rate, from pass uses every replica records in the
// store, inflates the advance instead, and visitors reached who have not
// come count against max_active until their grace ends.
func (ev *event) advance(ctx context.Context, l *lane, n int, rate float64, alone bool, now time.Time) (int, error) {
	target := int(math.Ceil(float64(n) / (1 - min(rate, maxNoShowRate))))
	from := l.serving.Load() + 1
	last := l.last.Load()
	limit := uint64(4*target + 100) // never run far ahead on stale liveness
	gone := now.Add(-ev.conf().NoShowGrace)
	drawnAt := l.drawTimes(from)
	k, offered, skipped := from, 0, 0
	for offered < target && k <= last && k-from < limit {
		// Gone: polled, but not within the grace; or never polled though
		// drawn more than a grace ago (live visitors poll every ≤ 30 s).
		// Shadow visitors take no admission either.
		t, polled := l.live.lastPoll(k)
		if (alone && ((polled && t.Before(gone)) || (!polled && drawnAt(k).Before(gone)))) || l.shadowAt(k) {
			l.skipped.set(k)
			skipped++
		} else {
			offered++
		}
		k++
	}
	to := k - 1
	if to < from {
		return 0, nil
	}
	v, err := ev.e.opts.Store.Advance(ctx, ev.conf().ID, l.cfg.Name, to)
	if err != nil {
		return 0, err
	}
	l.offers = append(l.offers, offer{at: now, from: from, to: to, skipped: skipped})
	l.bump(v, now) // the estimator sees it at the next follow
	return offered, nil
}

// drawTimes returns a function giving the draw time of numbers ≥ from,
// asked in increasing order.
func (l *lane) drawTimes(from uint64) func(uint64) time.Time {
	l.mu.RLock()
	draws := l.drawList
	l.mu.RUnlock()
	i := sort.Search(len(draws), func(i int) bool { return draws[i].Next() > from })
	return func(n uint64) time.Time {
		for i < len(draws) && draws[i].Next() <= n {
			i++
		}
		if i < len(draws) {
			return draws[i].At
		}
		return time.Now().Add(time.Hour) // not drawn here: never "gone"
	}
}

// arrivals are the offers of the last ctlClaimSoon: how many numbers
// were offered, and how many of those have not come yet; and the same of
// the offers before them, up to ctlClaimLately old.
type arrivals struct{ offered, pending, lateOffered, latePending, unarrived int }

// pendingAndNoShows measures, from the offers of the last grace period
// and the minute before it: how many offered visitors have not come yet
// (pending; those offered within ctlClaimSoon apart, as arriving), and
// what share of offers ended as no-shows. A visitor came when their pass
// was used at the gate (Store.Used, marked by every replica's tick): one
// who took the pass and never made a request is pending within the
// grace and a no-show after it.
func (ev *event) pendingAndNoShows(ctx context.Context, now time.Time) (int, arrivals, float64, error) {
	var arriving arrivals
	grace := ev.conf().NoShowGrace
	oldest := now.Add(-ev.offerMemory())
	pending, offeredOld, usedOld := 0, 0, 0
	for _, l := range ev.lanes {
		l.offers = slices.DeleteFunc(l.offers, func(o offer) bool { return o.at.Before(oldest) })
		if len(l.offers) == 0 {
			continue
		}
		from, to := l.offers[0].from, l.offers[len(l.offers)-1].to
		used, err := ev.usedRange(ctx, l, from, to)
		if err != nil {
			return 0, arriving, 0, err
		}
		// Passes minted past the grace and not used yet may still be:
		// until the pass runs out (a session after the grace at most).
		var claimed []bool
		var claimedFrom uint64
		if old := l.offers[0]; now.Sub(old.at) > grace {
			last := old
			for _, o := range l.offers {
				if now.Sub(o.at) > grace {
					last = o
				}
			}
			claimedFrom = old.from
			if claimed, err = ev.e.opts.Store.Claimed(ctx, ev.conf().ID, l.cfg.Name, old.from, last.to); err != nil {
				return 0, arriving, 0, err
			}
		}
		for oi, o := range l.offers {
			age := now.Sub(o.at)
			if age > grace {
				for k := o.from; k <= o.to && claimed != nil; k++ {
					if i := k - claimedFrom; i < uint64(len(claimed)) && claimed[i] && !used[k-from] &&
						age <= grace+ev.conf().SessionDuration {
						arriving.unarrived++
					}
				}
				if age > grace+noShowWindow {
					continue // remembered for its passes only
				}
			}
			offered, came := 0, 0
			for k := o.from; k <= o.to; k++ {
				c := used[k-from]
				if c {
					// A pass was minted for it: the visitor claimed their
					// turn (a late poll here needs no store read).
					l.claimed.set(k)
				}
				if l.skipped.has(k) {
					continue
				}
				offered++
				if c {
					came++
				}
			}
			if age > grace && !o.counted { // its grace is over: the minute record's no-shows
				l.offers[oi].counted = true
				ev.rec.noShows += offered - came + o.skipped
				ev.rec.reached += offered + o.skipped
			}
			if age > grace && !o.told {
				l.offers[oi].told = true
				if tell := ev.e.opts.NoShows; tell != nil && offered > came {
					tell(NoShow{Event: ev.conf().ID, Lane: l.cfg.Name, From: o.from, To: o.to, Count: offered - came,
						Offered: o.at, At: now})
				}
			}
			if age <= grace {
				pending += offered - came
				arriving.unarrived += offered - came
				switch {
				case age <= ctlClaimSoon:
					arriving.offered += offered
					arriving.pending += offered - came
				case age <= ctlClaimLately:
					arriving.lateOffered += offered
					arriving.latePending += offered - came
				}
			} else {
				offeredOld += offered
				usedOld += came
			}
		}
	}
	rate := 0.0
	if offeredOld >= 20 {
		rate = float64(offeredOld-usedOld) / float64(offeredOld)
	}
	return pending, arriving, rate, nil // the controller discounts pending by the rate
}

// releaseLate admits, at this tick, the visitors who came after their
// grace since the last one.
func (ev *event) releaseLate(now time.Time) {
	for _, l := range ev.lanes {
		l.lateMu.Lock()
		for n := range l.late {
			l.lateOK[n] = now
		}
		clear(l.late)
		for n, at := range l.lateOK {
			if now.Sub(at) > ev.conf().NoShowGrace+ev.conf().SessionDuration {
				delete(l.lateOK, n)
			}
		}
		l.lateMu.Unlock()
	}
}

// decide records the controller's decision of this tick.
func (ev *event) decide(d *Decision, now time.Time) {
	if d.At.IsZero() {
		d.At = now
	}
	ev.decided = true
	ev.decisions.record(*d)
}

func (ev *event) publishFigures(now time.Time) {
	f := *ev.figures.Load()
	if !ev.decided {
		f.Decision = Decision{} // no decision at this tick
	}
	f.State, f.Leader = ev.state(now), ev.leader.Load()
	if !f.Leader {
		f.Replicas, f.Minted, f.Redeemed, f.Unarrived = 0, 0, 0, 0 // the leader's
	}
	f.PassedThrough = ev.passed.Load()
	f.UsesDropped = ev.uses.dropped.Load()
	f.Mode = ev.mode()
	f.Queueing = ev.queueing(f.State)
	f.Lanes = make(map[string]LaneFigures, len(ev.lanes))
	for _, l := range ev.lanes {
		r := l.rates.Load()
		l.mu.RLock()
		undrawn := 0
		for _, n := range l.undrawn {
			undrawn += n
		}
		l.mu.RUnlock()
		serving, last := l.serving.Load(), l.last.Load()
		f.Lanes[l.cfg.Name] = LaneFigures{Serving: serving, Drawn: last, Waiting: last - min(last, serving),
			Undrawn: undrawn, RateLow: r[0], RateMid: r[1], RateHigh: r[2]}
	}
	ev.figures.Store(&f)
}

// queueing reports whether visitors without a pass go to the room in
// state st.
func (ev *event) queueing(st State) bool {
	return !(st == StatePassthrough || (ev.mode() == ModeThreshold && st == StateSelling && !ev.queued()))
}

// Figures returns an event's live figures (as of its last tick).
func (e *Engine) Figures(id string) Figures {
	ev, err := e.event(id)
	if err != nil {
		return Figures{}
	}
	return *ev.figures.Load()
}
