package admission

import (
	"context"
	"fmt"
	"time"
)

// publishSample takes this replica's sample of the event (when the meter
// is a Sampler) and publishes it for the leader, to be forgotten within a
// lease unless published again. Called under tickMu.
func (ev *event) publishSample(ctx context.Context, now time.Time) error {
	sm, ok := ev.e.opts.Meter.(Sampler)
	if !ok {
		ev.sampled = false
		return nil
	}
	s := sm.Sample(ev.conf().ID, now)
	s.Minted, s.Redeemed = ev.minted.Load(), ev.redeemed.Load()
	c := ev.counters()
	s.Joins, s.ETAKept, s.ETALate, s.Defence = c.joins, c.etaKept, c.etaLate, c.defence
	s.SortVisitors()
	ev.sample, ev.sampled = s, true
	b, err := s.AppendBinary(ev.sampleBuf[:0])
	if err != nil {
		return err
	}
	ev.sampleBuf = b
	return ev.e.opts.Store.PublishSample(ctx, ev.conf().ID, ev.e.opts.Replica, b, ev.lease())
}

// measure is what the leader's controller decides on: the sum of every
// replica's sample in force (this replica's own of this tick included,
// whatever the store answered), or, with a Meter that is not a Sampler,
// this replica's own measurements. Called under tickMu.
//
// It fails closed: when the store cannot list the samples, it returns the
// error and the controller admits nobody at this tick (deciding on the
// leader's own visitors alone would take the others' for none). A
// replica's sample missing from a listing that answered still counts, as
// last read, until it has been missing for a lease: after a Redis outage
// or failover longer than a lease every sample has run out in Redis, and
// until each replica publishes again (within a tick) the leader would
// otherwise see an empty origin and fill it a second time.
func (ev *event) measure(ctx context.Context, now time.Time) (Measurements, clusterFigures, error) {
	m := ev.e.opts.Meter
	if m == nil {
		return Measurements{}, clusterFigures{}, nil
	}
	if !ev.sampled {
		return m.Measure(ev.conf().ID, now), clusterFigures{replicas: 1}, nil
	}
	raw, err := ev.e.opts.Store.Samples(ctx, ev.conf().ID)
	if err != nil {
		return Measurements{}, clusterFigures{}, fmt.Errorf("reading the replicas' samples: %w", err)
	}
	if ev.heard == nil {
		ev.heard = map[string]*heardSample{}
	}
	for name, h := range ev.heard {
		if _, ok := raw[name]; !ok && h.missing.IsZero() {
			h.missing = now
		}
	}
	for name, b := range raw {
		var s Sample
		if err := s.UnmarshalBinary(b); err != nil {
			ev.e.log.Warn("admission: skipping an unreadable sample", "event", ev.conf().ID, "replica", name, "err", err)
			continue
		}
		ev.heard[name] = &heardSample{s: s}
	}
	samples := make(map[string]Sample, len(ev.heard)+1)
	for name, h := range ev.heard {
		if !h.missing.IsZero() && now.Sub(h.missing) >= ev.lease() {
			delete(ev.heard, name)
			continue
		}
		samples[name] = h.s
	}
	samples[ev.e.opts.Replica] = ev.sample
	bars := *ev.bars.Load()
	barred := make(map[uint32]bool, len(bars))
	for v := range bars {
		barred[VisitorKey(v)] = true
	}
	f := mergeSamples(samples, barred, ev.lastCompl)
	return f.m, f, nil
}

// heardSample is a replica's sample as the leader last read it, and
// since when the store's listings have lacked it (zero: the last one had
// it).
type heardSample struct {
	s       Sample
	missing time.Time
}

// inheritOffers gives a replica that has just become leader the recent
// advances of the serving counters, as it saw them follow (when, and from
// which number to which): the pending visitors and the no-show rate are
// measured from them, so the new leader does not take the visitors on
// their way for none. Which numbers were passed over as gone it cannot
// know: they count as offered. A replica that led before starts over
// too: it missed the other leader's advances. Called under tickMu.
func (ev *event) inheritOffers(now time.Time) {
	oldest := now.Add(-ev.offerMemory())
	for _, l := range ev.lanes {
		l.offers = l.offers[:0]
		l.mu.RLock()
		i := len(l.reach)
		for i > 1 && !l.reach[i-1].at.Before(oldest) {
			i--
		}
		for ; i < len(l.reach); i++ {
			if prev, r := l.reach[i-1], l.reach[i]; r.serving > prev.serving {
				// Those whose grace is over were counted by the last leader.
				l.offers = append(l.offers, offer{at: r.at, from: prev.serving + 1, to: r.serving,
					counted: now.Sub(r.at) > ev.conf().NoShowGrace})
			}
		}
		l.mu.RUnlock()
	}
}

// offerMemory is how long the leader remembers its advances: the no-show
// grace and the minute after it the no-show rate is measured over, or a
// session after the grace if that is longer (a pass minted and not used
// yet counts against max_active until it runs out).
func (ev *event) offerMemory() time.Duration {
	return ev.conf().NoShowGrace + max(noShowWindow, ev.conf().SessionDuration)
}
