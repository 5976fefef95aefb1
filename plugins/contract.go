package plugins

import (
	"context"
	"time"
)

// Event is one thing that happened, as event sinks receive it.
type Event struct {
	// ID names this event for de-duplication: the same on every delivery
	// attempt and, where the publisher can make it so, on every replica
	// and after a restart (hold, sold and released carry the audit
	// entry's). Empty: the sink gives it a random one.
	ID string `json:"id,omitempty"`
	// What happened: one of the Kind constants.
	Kind string `json:"kind"`
	// Waiting-room event id (the inventory event id for hold, sold and
	// sold_out).
	Event string `json:"event"`
	// Visitor id, when the event is about one visitor.
	Visitor string `json:"visitor,omitempty"`
	// When it happened.
	At time.Time `json:"at"`
	// Kind-specific details (seat ids, order id, hold id, lane, score).
	Data map[string]any `json:"data,omitempty"`
}

// Kinds of Event.
const (
	// A visitor joined the queue.
	KindJoined = "joined"
	// A visitor was given a pass.
	KindAdmitted = "admitted"
	// Queue numbers were reached and their no-show grace ran out without
	// the pass being used (data: lane, from, to, count).
	KindNoShow = "no_show"
	// Seats were held, sold, or released (released on purpose or
	// expired: data.reason) at the inventory sidecar.
	KindHold     = "hold"
	KindSold     = "sold"
	KindReleased = "released"
	// Nothing is left: the sidecar's last seat sold (data.source
	// "inventory"), or an operator marked the event sold out
	// (data.source "admission").
	KindSoldOut = "sold_out"
	// An operator paused or resumed admission.
	KindPaused  = "paused"
	KindResumed = "resumed"
	// The mode in force changed (data: from, to).
	KindModeChanged = "mode_changed"
)

// AllKinds lists every Kind, in the order of a sale. Read-only.
var AllKinds = []string{KindJoined, KindAdmitted, KindNoShow, KindHold, KindSold, KindReleased,
	KindSoldOut, KindPaused, KindResumed, KindModeChanged}

// Sink receives events. Publish never blocks the caller: a sink queues
// and delivers in the background, dropping (and counting) what does not
// fit its bounded queue. Safe for concurrent use.
type Sink interface {
	Publish(e Event)
	// Close delivers what is queued within ctx and stops.
	Close(ctx context.Context) error
}
