package admission

import (
	"context"
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
	s := sm.Sample(ev.cfg.ID, now)
	s.Minted, s.Redeemed = ev.minted.Load(), ev.redeemed.Load()
	s.SortVisitors()
	ev.sample, ev.sampled = s, true
	b, err := s.AppendBinary(ev.sampleBuf[:0])
	if err != nil {
		return err
	}
	ev.sampleBuf = b
	return ev.e.opts.Store.PublishSample(ctx, ev.cfg.ID, ev.e.opts.Replica, b, ev.lease())
}

// measure is what the leader's controller decides on: the sum of every
// replica's sample in force (this replica's own of this tick included,
// whatever the store answered), or, with a Meter that is not a Sampler,
// this replica's own measurements. Called under tickMu.
func (ev *event) measure(ctx context.Context, now time.Time) (Measurements, clusterFigures) {
	m := ev.e.opts.Meter
	if m == nil {
		return Measurements{}, clusterFigures{}
	}
	if !ev.sampled {
		return m.Measure(ev.cfg.ID, now), clusterFigures{replicas: 1}
	}
	samples := map[string]Sample{}
	raw, err := ev.e.opts.Store.Samples(ctx, ev.cfg.ID)
	if err != nil {
		ev.e.log.Warn("admission: reading the replicas' samples failed; deciding on this replica's alone", "event", ev.cfg.ID, "err", err)
	}
	for name, b := range raw {
		var s Sample
		if err := s.UnmarshalBinary(b); err != nil {
			ev.e.log.Warn("admission: skipping an unreadable sample", "event", ev.cfg.ID, "replica", name, "err", err)
			continue
		}
		samples[name] = s
	}
	samples[ev.e.opts.Replica] = ev.sample
	bars := *ev.bars.Load()
	barred := make(map[uint32]bool, len(bars))
	for v := range bars {
		barred[VisitorKey(v)] = true
	}
	f := mergeSamples(samples, barred, ev.lastCompl)
	return f.m, f
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
				l.offers = append(l.offers, offer{at: r.at, from: prev.serving + 1, to: r.serving})
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
	return ev.cfg.NoShowGrace + max(noShowWindow, ev.cfg.SessionDuration)
}
