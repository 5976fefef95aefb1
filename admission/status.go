package admission

import (
	"context"
	"fmt"
	"sort"
	"time"
)

// Status is what a visitor's poll says.
type Status struct {
	Event string
	Kind  StatusKind
	Lane  string
	// Position is how many people are ahead in the line: 0 for the next
	// in line (and when admitted); -1 before the draw.
	Position int64
	ETA      ETA
	// Refresh is when to poll next.
	Refresh  time.Duration
	OnSaleAt time.Time
	// DrawAt is when the visitor's tranche is drawn (waiting_for_draw).
	DrawAt time.Time
	// Reason details a closed status ("closed", "session_ended").
	Reason string
}

// StatusResult is a status and what the proxy must hand the visitor.
type StatusResult struct {
	Status Status
	// Ticket is the visitor's ticket, with its number once drawn.
	Ticket Ticket
	// Renewed is true when Ticket differs from the one given: reissue it.
	Renewed bool
	// Pass is set when the visitor is admitted: sign it and set it.
	Pass *Pass
}

// Status computes a visitor's status from their (verified) ticket. For a
// drawn ticket it reads only in-memory counters and allocates nothing;
// the first poll after the draw looks the visitor's number up once.
func (e *Engine) Status(ctx context.Context, id string, t Ticket) (StatusResult, error) {
	return e.StatusAt(ctx, id, t, time.Time{})
}

// StatusAt is Status for a caller that has read the clock already: now
// is that reading (the proxy's: when the request arrived), which saves
// the engine a clock read on the path every waiting browser polls. It is
// used only when the engine's clock is the real one; with an injected
// clock, or a zero now, the engine reads its own.
func (e *Engine) StatusAt(ctx context.Context, id string, t Ticket, now time.Time) (StatusResult, error) {
	if now.IsZero() || !e.realClock {
		now = e.clock()
	}
	ev, err := e.event(id)
	if err != nil {
		return StatusResult{}, err
	}
	if t.Event != id {
		return StatusResult{}, ErrWrongEvent
	}
	return e.status(ctx, ev, t, now)
}

func (e *Engine) status(ctx context.Context, ev *event, t Ticket, now time.Time) (StatusResult, error) {
	l := ev.byName[t.Lane]
	if l == nil {
		return StatusResult{}, fmt.Errorf("%w: %q", ErrUnknownLane, t.Lane)
	}
	res := StatusResult{Ticket: t, Status: Status{Event: ev.conf().ID, Lane: t.Lane, Position: -1,
		ETA: ETA{Seconds: -1, Low: -1, High: -1}, Refresh: DefaultRefresh, OnSaleAt: ev.conf().OnSaleAt}}
	st := ev.state(now)
	switch st {
	case StateScheduled:
		res.Status.Kind = StatusScheduled
		return res, nil
	case StateClosed:
		res.Status.Kind, res.Status.Reason = StatusClosed, "closed"
		return res, nil
	}
	if b, ok := ev.known(t.Visitor); ok {
		// Revoked, or done: no place, no pass, whatever the queue says.
		res.Status.Kind, res.Status.Reason, res.Status.Refresh = StatusClosed, string(b.Reason), time.Minute
		return res, nil
	}
	if st == StatePassthrough {
		if r, ok := ev.letIn(l, res, now); ok {
			return r, nil
		}
	}
	if t.Number == 0 {
		n, renewed, err := ev.number(ctx, l, &res.Ticket, now)
		if err != nil {
			return res, err
		}
		res.Renewed = renewed
		if n == 0 {
			ev.undrawnStatus(l, &res, st, now)
			return res, nil
		}
	}
	n := res.Ticket.Number
	l.live.mark(n, now)
	serving := l.serving.Load()
	if n > serving {
		if st == StateSoldOut {
			res.Status.Kind = StatusSoldOut
			return res, nil
		}
		res.Status.Kind = StatusWaiting
		switch st {
		case StatePaused:
			res.Status.Kind = StatusPaused
		case StateMaintenance:
			res.Status.Kind, res.Status.Reason = StatusPaused, string(StateMaintenance)
		}
		// Ahead of n are the numbers not yet reached before it:
		// serving+1 … n-1. The next in line has nobody ahead (0).
		res.Status.Position = int64(n - serving - 1)
		r := l.rates.Load()
		res.Status.ETA = EstimateETA(float64(n-serving), 0, r[0], r[1], r[2])
		res.Status.Refresh = refreshFor(int64(n-serving), r[1], r[2], l.measured.Load(), ev.figures.Load().Limit) // the wait for the visitor's own turn
		return res, nil
	}
	return ev.admit(ctx, l, res, now)
}

// refreshFor paces polls: often near the front, rarely far back. left is
// how many admissions are still to come up to and including the
// visitor's own (the people ahead, plus one); mid and high the lane's
// rate estimates, measured when they come from its own pace rather than
// a prior. A visitor never sleeps past half the earliest their turn may
// come (at the high rate), so those reached come within seconds and the
// origin does not wait for them; and while the rates are a prior, which
// may be far off the pace to come, nobody sleeps longer than
// DefaultRefresh. limit is the controller's active-visitor limit: before
// the pace is measured, the first that many may be let in at any tick.
func refreshFor(left int64, mid, high float64, measured bool, limit int) time.Duration {
	switch {
	case left <= 0, high > 0 && float64(left)/high < 10, !measured && left <= int64(limit):
		return time.Second // a turn due within seconds: the origin waits for nobody
	case mid > 0 && float64(left)/mid < 60, !measured && left <= 10*int64(limit):
		return 2 * time.Second
	}
	r := DefaultRefresh
	if measured && mid > 0 && float64(left)/mid > 1800 {
		r = 30 * time.Second
	}
	if high > 0 {
		earliest := time.Duration(float64(left) / high / 2 * float64(time.Second))
		r = min(r, max(2*time.Second, earliest))
	}
	return r
}

// number finds the visitor's number once their tranche is drawn. It
// returns 0 while the tranche is not drawn (or not loaded) here yet.
func (ev *event) number(ctx context.Context, l *lane, t *Ticket, now time.Time) (uint64, bool, error) {
	l.mu.RLock()
	d := l.draws[t.Tranche]
	l.mu.RUnlock()
	if d == nil {
		// A later tranche drawn while this one has no record means the
		// leader passed it by as empty: the visitor's join raced its
		// close. The time limit is a backstop for a tranche nobody drew
		// after (a big draw takes seconds, never minutes).
		if l.drawnTo.Load() > int64(t.Tranche) || now.After(trancheCloses(ev.conf(), t.Tranche).Add(rejoinAfter)) {
			return ev.rejoin(ctx, l, t, now)
		}
		return 0, false, nil
	}
	if d.ordered == nil {
		return 0, false, nil // being loaded
	}
	i := Find(d.draw.Seed, d.ordered, t.Visitor)
	if i < 0 {
		return ev.rejoin(ctx, l, t, now)
	}
	t.Number = d.draw.First + uint64(i)
	return t.Number, true, nil
}

// rejoin puts a visitor whose join did not make it into its tranche's
// draw (it raced the close) into the current tranche, same visitor id.
func (ev *event) rejoin(ctx context.Context, l *lane, t *Ticket, now time.Time) (uint64, bool, error) {
	ev.e.log.Warn("admission: visitor missing from a drawn tranche; placing them in the current one",
		"event", ev.conf().ID, "lane", l.cfg.Name, "tranche", t.Tranche)
	nt, err := ev.place(ctx, l, t.Visitor, t.Binding, now)
	if err != nil {
		return 0, false, err
	}
	nt.PromisedBy = t.PromisedBy // the promise made at the join stands
	*t = nt
	return 0, true, nil
}

// undrawnStatus answers a visitor whose tranche is not drawn yet.
func (ev *event) undrawnStatus(l *lane, res *StatusResult, st State, now time.Time) {
	drawAt := trancheCloses(ev.conf(), res.Ticket.Tranche).Add(joinMargin)
	res.Status.DrawAt = drawAt
	res.Status.Kind = StatusWaitingForDraw
	if st == StatePrequeue {
		res.Status.Kind = StatusPrequeue
	}
	if st == StateSoldOut {
		res.Status.Kind = StatusSoldOut
		return
	}
	res.Status.Refresh = min(DefaultRefresh, max(time.Second, drawAt.Sub(now)))
	r := l.rates.Load()
	l.mu.RLock()
	before, mine := 0, l.undrawn[res.Ticket.Tranche]
	for tr, n := range l.undrawn {
		if tr < res.Ticket.Tranche {
			before += n
		}
	}
	l.mu.RUnlock()
	waiting := float64(l.last.Load() - l.serving.Load())
	wait := max(0, drawAt.Sub(now))
	lo := EstimateETA(waiting+float64(before), wait, r[0], r[1], r[2])
	mid := EstimateETA(waiting+float64(before)+float64(mine)/2, wait, r[0], r[1], r[2])
	hi := EstimateETA(waiting+float64(before+mine), wait, r[0], r[1], r[2])
	res.Status.ETA = ETA{Seconds: mid.Seconds, Low: lo.Low, High: hi.High}
}

// admit answers a visitor whose number has been reached: a pass while
// their turn lasts, after a tick's wait if they came after their grace.
func (ev *event) admit(ctx context.Context, l *lane, res StatusResult, now time.Time) (StatusResult, error) {
	n := res.Ticket.Number
	res.Status.Position = 0
	res.Status.ETA = ETA{}
	res.Status.Refresh = time.Second
	grace, session := ev.conf().NoShowGrace, ev.conf().SessionDuration
	reachedAt := l.reachedAt(n)
	anchor := reachedAt
	if b, ok := ev.barred(res.Ticket.Visitor); ok {
		// Done here since the last tick: no new pass.
		res.Status.Kind, res.Status.Reason, res.Status.Refresh = StatusClosed, string(b.Reason), time.Minute
		res.Status.Position, res.Status.ETA = -1, ETA{Seconds: -1, Low: -1, High: -1}
		return res, nil
	}
	if ev.shadowed(&res.Ticket.Visitor) {
		// Never admitted: told to wait, as a late visitor is for a tick,
		// until their turn would have ended.
		if !now.Before(reachedAt.Add(grace + session)) {
			res.Status.Kind, res.Status.Reason = StatusClosed, "session_ended"
			res.Status.Refresh = time.Minute
			return res, nil
		}
		res.Status.Kind = StatusWaiting
		return res, nil
	}
	switch {
	case l.claimed.has(n):
	case now.Sub(reachedAt) <= grace:
	default:
		// Came after their grace: were they here before (on another
		// replica)? If not, they get in at the next tick.
		l.lateMu.Lock()
		okAt, ok := l.lateOK[n]
		if !ok {
			if _, waiting := l.late[n]; !waiting {
				l.late[n] = now
			}
		}
		l.lateMu.Unlock()
		if ok {
			anchor = okAt
			break
		}
		claimed, err := ev.e.opts.Store.Claimed(ctx, ev.conf().ID, l.cfg.Name, n, n)
		if err == nil && len(claimed) == 1 && claimed[0] {
			l.claimed.set(n)
			break
		}
		res.Status.Kind = StatusWaiting
		return res, nil
	}
	until := anchor.Add(grace + session)
	if !now.Before(until) {
		res.Status.Kind, res.Status.Reason = StatusClosed, "session_ended"
		res.Status.Refresh = time.Minute
		return res, nil
	}

	if l.claimed.set(n) {
		if err := ev.e.opts.Store.Claim(ctx, ev.conf().ID, l.cfg.Name, n); err != nil {
			ev.e.log.Warn("admission: recording a claim failed", "event", ev.conf().ID, "err", err)
		}
		// The first pass of the number here: was the join's promise kept?
		if p := res.Ticket.PromisedBy; !p.IsZero() {
			if now.After(p) {
				ev.etaLate.Add(1)
			} else {
				ev.etaKept.Add(1)
			}
		}
	}
	res.Status.Kind = StatusAdmitted
	ev.minted.Add(1)
	res.Pass = &Pass{ID: NewPassIDFor(res.Ticket.Visitor), Event: ev.conf().ID, Visitor: res.Ticket.Visitor, Lane: l.cfg.Name, Number: n,
		Binding: res.Ticket.Binding, IssuedAt: now, ExpiresAt: minTime(now.Add(session), until),
		// The session began with the turn, so polling again within it does
		// not start a new one (MaxSession counts from here).
		AdmittedAt: minTime(anchor, now).Truncate(time.Second)}
	return res, nil
}

// letIn admits a visitor in the passthrough state, whatever their place:
// a pass for a session now, the place (if drawn) kept in the ticket for
// when the room queues again. Shadow visitors are not let in (ok false).
func (ev *event) letIn(l *lane, res StatusResult, now time.Time) (StatusResult, bool) {
	if ev.shadowed(&res.Ticket.Visitor) {
		return res, false
	}
	res.Status.Kind, res.Status.Position, res.Status.ETA, res.Status.Refresh = StatusAdmitted, 0, ETA{}, time.Second
	ev.minted.Add(1)
	res.Pass = &Pass{ID: NewPassIDFor(res.Ticket.Visitor), Event: ev.conf().ID, Visitor: res.Ticket.Visitor,
		Lane: l.cfg.Name, Number: res.Ticket.Number, Binding: res.Ticket.Binding, IssuedAt: now,
		ExpiresAt: now.Add(ev.conf().SessionDuration), AdmittedAt: now.Truncate(time.Second)}
	return res, true
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// reachedAt is when this replica saw the serving counter pass n.
func (l *lane) reachedAt(n uint64) time.Time {
	l.mu.RLock()
	defer l.mu.RUnlock()
	i := sort.Search(len(l.reach), func(i int) bool { return l.reach[i].serving >= n })
	if i == len(l.reach) {
		return l.event.e.clock()
	}
	return l.reach[i].at
}
