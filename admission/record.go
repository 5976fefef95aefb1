package admission

// The leader's minute records: at each of its ticks the leader adds what
// happened since its last tick (summed over every replica's samples, as
// the controller's measurements are) to the record of the current
// minute, and writes the record to the store (Store.RecordMinute) when
// the minute ends, and every recordEvery within it, so that a report
// made during the sale shows the minute in progress. Counters are
// cumulative per replica in the samples; the record takes their deltas
// (a replica seen for the first time counts from its next tick). A
// leader that takes over mid-minute carries on from the record its
// predecessor last wrote.

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/waitroom/waitroom/internal/loghist"
)

// recordEvery is how often the minute in progress is written.
const recordEvery = 15 * time.Second

// replicaCounters are one replica's cumulative counters in a sample.
type replicaCounters struct {
	minted, joins, etaKept, etaLate uint64
	defence                         [len(DefenceBands)]uint64
}

func countersOf(s *Sample) replicaCounters {
	return replicaCounters{minted: s.Minted, joins: s.Joins, etaKept: s.ETAKept, etaLate: s.ETALate, defence: s.Defence}
}

// counters are this replica's own counters of the event.
func (ev *event) counters() replicaCounters {
	c := replicaCounters{minted: ev.minted.Load(), joins: ev.joined.Load(),
		etaKept: ev.etaKept.Load(), etaLate: ev.etaLate.Load()}
	for i := range c.defence {
		c.defence[i] = ev.defence[i].Load()
	}
	return c
}

// recorder is the leader's minute record in the making, under tickMu.
type recorder struct {
	cur      Minute // the minute being counted (At zero: none yet)
	lat      [loghist.Buckets]float64
	last     map[string]replicaCounters
	lastTick time.Time
	written  time.Time
	// Set by this tick's regulate: the measurements it decided on and
	// its decision.
	measured bool
	m        Measurements
	cf       clusterFigures
	decided  bool
	target   int
	reason   string
	// noShows and reached are counted by pendingAndNoShows since the
	// last record.
	noShows, reached int
	// seats is the inventory's remaining count at the last tick (-1:
	// not known).
	seats int
}

// NoteDefence counts a bot-defence action applied to a visitor of the
// event (band is one of DefenceBands; anything else is ignored), for
// the minute records. It allocates nothing.
func (e *Engine) NoteDefence(event, band string) {
	ev := e.lookup(event)
	if ev == nil {
		return
	}
	for i, b := range DefenceBands {
		if b == band {
			ev.defence[i].Add(1)
			return
		}
	}
}

// noteMeasured keeps what regulate decided on for the minute record.
func (ev *event) noteMeasured(m Measurements, cf clusterFigures) {
	ev.rec.measured, ev.rec.m, ev.rec.cf = true, m, cf
}

// noteDecided keeps the controller's decision for the minute record.
func (ev *event) noteDecided(d *Decision) {
	ev.rec.decided, ev.rec.target, ev.rec.reason = true, d.Limit, string(d.Reason)
}

// record adds this tick to the minute record and writes it when due.
// Called by the leader under tickMu, after regulate.
func (ev *event) record(ctx context.Context, now time.Time) error {
	r := &ev.rec
	keep := ev.e.opts.MinuteRetention
	defer func() { r.measured, r.decided, r.noShows, r.reached = false, false, 0, 0 }()
	if keep < 0 {
		return nil
	}
	m, cf := r.m, r.cf
	if !r.measured {
		var err error
		if m, cf, err = ev.measure(ctx, now); err != nil {
			return err
		}
	}
	if cf.counters == nil { // a Meter that is not a Sampler: this replica's own
		cf.counters = map[string]replicaCounters{ev.e.opts.Replica: ev.counters()}
	}
	var errs []error
	minute := now.UTC().Truncate(time.Minute)
	if !r.cur.At.IsZero() && !r.cur.At.Equal(minute) {
		errs = append(errs, ev.writeMinute(ctx, keep))
		r.cur, r.lat = Minute{}, [loghist.Buckets]float64{}
	}
	if r.cur.At.IsZero() {
		r.cur = Minute{At: minute, SeatsLeft: -1}
		if r.lastTick.IsZero() || now.Sub(r.lastTick) > ev.lease() {
			// Taking over: carry on from what the last leader wrote.
			ev.resumeMinute(ctx, minute)
		}
	}
	c := &r.cur
	c.Ticks++
	if r.last == nil {
		r.last, r.seats = map[string]replicaCounters{}, -1
	}
	for name, cur := range cf.counters {
		if prev, ok := r.last[name]; ok {
			c.Admitted += delta(cur.minted, prev.minted)
			c.Arrivals += delta(cur.joins, prev.joins)
			c.ETAKept += delta(cur.etaKept, prev.etaKept)
			c.ETALate += delta(cur.etaLate, prev.etaLate)
			d := c.Defence.Slice()
			for i := range d {
				d[i] += delta(cur.defence[i], prev.defence[i])
			}
			c.Defence = defenceFrom(d)
		}
		r.last[name] = cur
	}
	for name := range r.last {
		if _, ok := cf.counters[name]; !ok {
			delete(r.last, name)
		}
	}
	dt := ev.conf().Controller.Tick
	if !r.lastTick.IsZero() && now.After(r.lastTick) && now.Sub(r.lastTick) < ev.lease() {
		dt = now.Sub(r.lastTick)
	}
	r.lastTick = now
	secs := dt.Seconds()
	c.OriginRequests += m.RequestRate * secs
	if ev.sampled {
		c.OriginErrors += cf.errRate * secs
	} else {
		c.OriginErrors += m.ErrorRate * m.RequestRate * secs
	}
	hist := false
	for i, x := range cf.latRate {
		if x > 0 {
			r.lat[i] += x * secs
			hist = true
		}
	}
	var total float64
	for _, x := range r.lat {
		total += x
	}
	if total > 0 {
		c.LatencyP50Ms = ms(loghist.Percentile(&r.lat, total, 0.50))
		c.LatencyP99Ms = ms(loghist.Percentile(&r.lat, total, 0.99))
	} else if !hist && m.LatencyP50 > 0 {
		// A Meter that is not a Sampler has no histogram: its p50.
		c.LatencyP50Ms = ms(m.LatencyP50)
	}
	c.Active = max(c.Active, m.Active)
	waiting := 0
	for _, l := range ev.lanes {
		waiting += int(l.last.Load() - min(l.last.Load(), l.serving.Load()))
	}
	c.Waiting = waiting
	if r.decided {
		c.Target, c.Reason = r.target, r.reason
	}
	c.NoShows += r.noShows
	c.Reached += r.reached
	if ev.e.opts.Inventory != nil && ev.conf().InventoryEvent != "" {
		if left, known := ev.e.opts.Inventory.Remaining(ev.conf().InventoryEvent); known {
			if r.seats >= 0 && left < r.seats {
				c.SeatsSold += r.seats - left
			}
			r.seats, c.SeatsLeft = left, left
		}
	} else {
		r.seats = -1
	}
	if now.Sub(r.written) >= recordEvery {
		errs = append(errs, ev.writeMinute(ctx, keep))
		r.written = now
	}
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// delta is a counter's growth since prev (0 when it went back: the
// replica restarted).
func delta(now, prev uint64) uint64 {
	if now < prev {
		return 0
	}
	return now - prev
}

func ms(d time.Duration) float64 {
	return math.Round(float64(d)/float64(time.Microsecond)) / 1000
}

// writeMinute stores the minute record in the making.
func (ev *event) writeMinute(ctx context.Context, keep time.Duration) error {
	b, err := ev.rec.cur.MarshalBinary()
	if err != nil {
		return err
	}
	if err := ev.e.opts.Store.RecordMinute(ctx, ev.conf().ID, ev.rec.cur.At, b, keep); err != nil {
		return fmt.Errorf("recording minute %s: %w", ev.rec.cur.At.Format("15:04"), err)
	}
	return nil
}

// resumeMinute starts the minute from the record stored for it, if any
// (a leader that took over mid-minute), keeping its counts.
func (ev *event) resumeMinute(ctx context.Context, minute time.Time) {
	recs, err := ev.e.opts.Store.Minutes(ctx, ev.conf().ID, minute, minute.Add(time.Minute))
	if err != nil || len(recs) == 0 {
		return
	}
	var m Minute
	if m.UnmarshalBinary(recs[0].Record) != nil || !m.At.Equal(minute) {
		return
	}
	ev.rec.cur = m
}

// FlushMinutes writes the minute records in the making of the events
// this replica leads (at shutdown: the last minute is not lost).
func (e *Engine) FlushMinutes(ctx context.Context) error {
	var errs []error
	for _, ev := range e.all() {
		ev.tickMu.Lock()
		if ev.leader.Load() && !ev.rec.cur.At.IsZero() && e.opts.MinuteRetention > 0 {
			errs = append(errs, ev.writeMinute(ctx, e.opts.MinuteRetention))
		}
		ev.tickMu.Unlock()
	}
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// Store returns the engine's store (for reading what it recorded, such
// as the minute records and draws of a report).
func (e *Engine) Store() Store { return e.opts.Store }
