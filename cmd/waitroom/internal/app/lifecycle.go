package app

import (
	"context"
	"strconv"
	"time"

	"github.com/waitroom/waitroom/admission"
	"github.com/waitroom/waitroom/plugins"
)

// stateWatch tells the event sinks of what operators do to an event:
// paused and resumed, mode_changed, and sold_out when the event is marked
// sold out (data.source "admission"; the sidecar's own sell-out comes
// from the audit feed). It reads every event's state and mode each
// period, so that a change made on any replica (its admin API, a reload)
// is told, by the leader of the event only. A replica that becomes
// leader does not tell again what it saw while following. The first
// reading is the starting point, not news.
type stateWatch struct {
	engine  *admission.Engine
	publish func(plugins.Event)
	period  time.Duration
	seen    map[string]watched // by event; only run's goroutine touches it
}

// watched is what stateWatch last saw of an event.
type watched struct {
	state admission.State
	mode  admission.Mode
}

func newStateWatch(e *admission.Engine, publish func(plugins.Event), period time.Duration) *stateWatch {
	return &stateWatch{engine: e, publish: publish, period: period, seen: map[string]watched{}}
}

func (s *stateWatch) run(ctx context.Context) {
	t := time.NewTicker(s.period)
	defer t.Stop()
	for {
		s.check(time.Now())
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// check reads every event once and publishes what changed since the last
// reading.
func (s *stateWatch) check(now time.Time) {
	for _, id := range s.engine.Events() {
		f := s.engine.Figures(id)
		cur := watched{state: f.State, mode: f.Mode}
		if cur.state == "" || cur.mode == "" {
			continue // not known yet (before the event's first tick)
		}
		prev, known := s.seen[id]
		s.seen[id] = cur
		if !known || !f.Leader {
			continue
		}
		for _, e := range stateEvents(id, prev, cur, now) {
			s.publish(e)
		}
	}
}

// stateEvents are the sink events of one event's change from prev to cur.
func stateEvents(id string, prev, cur watched, now time.Time) []plugins.Event {
	var out []plugins.Event
	add := func(kind string, data map[string]any) {
		out = append(out, plugins.Event{ID: eventID(kind, id, strconv.FormatInt(now.UnixMilli(), 10)),
			Kind: kind, Event: id, At: now.UTC(), Data: data})
	}
	switch {
	case cur.state == admission.StatePaused && prev.state != admission.StatePaused:
		add(plugins.KindPaused, map[string]any{"from": string(prev.state)})
	case prev.state == admission.StatePaused && cur.state != admission.StatePaused:
		add(plugins.KindResumed, map[string]any{"to": string(cur.state)})
	}
	if cur.state == admission.StateSoldOut && prev.state != admission.StateSoldOut {
		add(plugins.KindSoldOut, map[string]any{"source": "admission"})
	}
	if cur.mode != prev.mode {
		add(plugins.KindModeChanged, map[string]any{"from": string(prev.mode), "to": string(cur.mode)})
	}
	return out
}

// noShow tells the sinks of numbers whose no-show grace ran out unused
// (admission.Options.NoShows; called from the leader's tick).
func (w *Waitroom) noShow(n admission.NoShow) {
	from, to := strconv.FormatUint(n.From, 10), strconv.FormatUint(n.To, 10)
	w.publish(plugins.Event{ID: eventID(plugins.KindNoShow, n.Event, n.Lane, from, to), Kind: plugins.KindNoShow,
		Event: n.Event, At: n.At.UTC(),
		Data: map[string]any{"lane": n.Lane, "from": n.From, "to": n.To, "count": n.Count, "offered_at": n.Offered.UTC()}})
}
