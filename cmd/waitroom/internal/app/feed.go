package app

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/waitroom/waitroom/inventory"
	"github.com/waitroom/waitroom/plugins"
)

// auditFeed tells the event sinks of holds, sales and sell-outs. It tails
// the seat-hold sidecar's audit stream of every inventory event a
// waiting-room event is linked to (events[].inventory_event):
//
//   - a hold entry becomes a "hold" event, a confirm entry a "sold" one,
//     a release or an expiry a "released" one (data.reason released or
//     expired), all named by the inventory event and carrying the entry's
//     id (data.audit_id; the event's ID is derived from it, so it is the
//     same on every replica), hold and order ids, seats or GA pool and
//     quantity, and the user;
//   - "sold_out" is sent when, after a sale, no seat is available or held
//     any more; a cancelled order that frees seats arms it again.
//
// Sinks hear of what happens after this process started: the first read
// of a stream skips entries time-stamped before that. The feed also counts
// the entries it reads by action (waitroom_inventory_audit_entries_total,
// on every replica, sinks or not): a hold's expiry is only ever seen in
// the audit stream, since reads expire due holds before the reaper does.
//
// With several replicas every one tails the streams but only the leader
// of a linked waiting-room event publishes. A replica that becomes leader
// publishes again what it read within the last handover window (the
// admission lease and a refresh): entries the old leader may have read
// and died before sending. Across a leader change delivery is therefore
// at least once; within one leader's term, once.
type auditFeed struct {
	src      auditSource
	streams  []*auditStream
	leads    func(room string) bool
	publish  func(plugins.Event)
	since    time.Time // entries before this are history, not news
	refresh  time.Duration
	handover time.Duration
	log      *slog.Logger
	// entries counts the entries read, by inventory event and action, on
	// every replica (waitroom_inventory_audit_entries_total); nil: not
	// counted.
	entries *prometheus.CounterVec
}

// auditSource is the part of the sidecar's client the feed reads.
type auditSource interface {
	Audit(ctx context.Context, event, after string, limit int) (inventory.AuditPage, error)
	Availability(ctx context.Context, event string) (inventory.Availability, error)
}

// auditStream is the feed's state for one inventory event. Only the
// feed's goroutine touches it.
type auditStream struct {
	event   string   // inventory event
	rooms   []string // waiting-room events linked to it
	cursor  string
	synced  bool // the cursor is past the history
	leading bool
	soldOut bool
	fails   int
	recent  []readEvent // what was read within the handover window
}

// readEvent is an event the feed read, and when.
type readEvent struct {
	at time.Time
	e  plugins.Event
}

// feedPages bounds how many audit pages one refresh reads of a stream, so
// that a long backlog is worked off over several refreshes.
const feedPages = 20

func newAuditFeed(src auditSource, links map[string][]string, leads func(string) bool,
	publish func(plugins.Event), since time.Time, refresh, handover time.Duration, log *slog.Logger) *auditFeed {
	f := &auditFeed{src: src, leads: leads, publish: publish, since: since, refresh: refresh,
		handover: handover, log: log}
	for ev, rooms := range links {
		f.streams = append(f.streams, &auditStream{event: ev, rooms: rooms})
	}
	return f
}

// run reads every stream each refresh until ctx ends.
func (f *auditFeed) run(ctx context.Context) {
	t := time.NewTicker(f.refresh)
	defer t.Stop()
	for {
		for _, s := range f.streams {
			f.poll(ctx, s, time.Now())
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// poll reads what is new in one stream and publishes it if this process
// leads.
func (f *auditFeed) poll(ctx context.Context, s *auditStream, now time.Time) {
	lead := false
	for _, r := range s.rooms {
		lead = lead || f.leads(r)
	}
	if lead && !s.leading {
		// Taking over: what the old leader may not have sent.
		for _, r := range s.recent {
			f.publish(r.e)
		}
	}
	s.leading = lead
	s.recent = pruneBefore(s.recent, now.Add(-f.handover))

	var news []plugins.Event
	changed, sold := false, false // seats left changed; a sale is news
	read := true
	for range feedPages {
		cctx, cancel := context.WithTimeout(ctx, f.refresh)
		page, err := f.src.Audit(cctx, s.event, s.cursor, inventory.MaxAuditPage)
		cancel()
		if err != nil {
			f.failed(ctx, s, err)
			read = false
			break
		}
		s.fails = 0
		for _, ent := range page.Entries {
			// A sale or a cancellation changes the seats left (a hold,
			// a release or an expiry moves seats between available and
			// held, both of which still count as left).
			changed = changed || ent.Action == inventory.ActionConfirm || ent.Action == inventory.ActionCancel
			if !s.synced && ent.At.Before(f.since) {
				continue
			}
			if f.entries != nil {
				f.entries.WithLabelValues(s.event, ent.Action).Inc()
			}
			if e, ok := sinkEvent(s.event, ent); ok {
				news = append(news, e)
				sold = sold || e.Kind == plugins.KindSold
			}
		}
		s.cursor = page.Next
		if len(page.Entries) < inventory.MaxAuditPage {
			break
		}
	}
	if read && (!s.synced || changed) {
		if e, ok := f.checkSoldOut(ctx, s, sold, now); ok {
			news = append(news, e)
		}
	}
	s.synced = s.synced || read
	for _, e := range news {
		s.recent = append(s.recent, readEvent{at: now, e: e})
		if lead {
			f.publish(e)
		}
	}
}

// checkSoldOut reads the stream's availability and returns a sold_out
// event when the last seat has just gone: since the last check, or (on
// the first read) with a sale among the news.
func (f *auditFeed) checkSoldOut(ctx context.Context, s *auditStream, sold bool, now time.Time) (plugins.Event, bool) {
	cctx, cancel := context.WithTimeout(ctx, f.refresh)
	a, err := f.src.Availability(cctx, s.event)
	cancel()
	if err != nil {
		f.failed(ctx, s, err)
		return plugins.Event{}, false
	}
	was := s.soldOut
	s.soldOut = a.Available+a.Held == 0
	if !s.soldOut || was || !s.synced && !sold {
		return plugins.Event{}, false
	}
	// Named by the stream position it was found at, so that a new
	// leader sending it again sends it under the same id.
	return plugins.Event{ID: eventID(plugins.KindSoldOut, s.event, s.cursor), Kind: plugins.KindSoldOut, Event: s.event, At: now.UTC(),
		Data: map[string]any{"sold": a.Sold, "rooms": s.rooms, "source": "inventory"}}, true
}

// failed counts a failed read: a sidecar starting, or an event not defined
// yet, fails a few times; it is logged when it lasts. A cursor the
// sidecar no longer knows (a store rebuilt) starts the stream over.
func (f *auditFeed) failed(ctx context.Context, s *auditStream, err error) {
	if errors.Is(err, inventory.ErrInvalid) && s.cursor != "" {
		f.log.Warn("app: the audit stream no longer knows the feed's cursor; reading it from the start",
			"inventory_event", s.event, "err", err)
		s.cursor, s.synced = "", false
		return
	}
	s.fails++
	if n := s.fails; ctx.Err() == nil && (n == linkStale || n%(10*linkStale) == 0) {
		f.log.Warn("app: reading the audit stream for the event sinks keeps failing",
			"inventory_event", s.event, "failures", n, "err", err)
	}
}

// sinkEvent maps an audit entry to what sinks hear of (hold and confirm
// entries only).
func sinkEvent(event string, ent inventory.AuditEntry) (plugins.Event, bool) {
	var kind, reason string
	switch ent.Action {
	case inventory.ActionHold:
		kind = plugins.KindHold
	case inventory.ActionConfirm:
		kind = plugins.KindSold
	case inventory.ActionRelease:
		kind, reason = plugins.KindReleased, "released"
	case inventory.ActionExpire:
		kind, reason = plugins.KindReleased, "expired"
	default:
		return plugins.Event{}, false
	}
	data := map[string]any{"audit_id": ent.ID}
	if reason != "" {
		data["reason"] = reason
	}
	put := func(k, v string) {
		if v != "" {
			data[k] = v
		}
	}
	put("hold_id", ent.HoldID)
	put("order_id", ent.OrderID)
	put("user", ent.User)
	put("actor", ent.Actor)
	put("pool", ent.Pool)
	if len(ent.Seats) > 0 {
		data["seats"] = ent.Seats
	}
	if ent.Quantity > 0 {
		data["quantity"] = ent.Quantity
	}
	return plugins.Event{ID: eventID(kind, event, ent.ID), Kind: kind, Event: event, At: ent.At.UTC(), Data: data}, true
}

// pruneBefore drops the events read before t (they are in read order).
func pruneBefore(es []readEvent, t time.Time) []readEvent {
	i := 0
	for i < len(es) && es[i].at.Before(t) {
		i++
	}
	return append(es[:0], es[i:]...)
}
