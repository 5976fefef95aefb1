package plugins

import (
	"context"
	"time"
)

// Event is one thing that happened, as event sinks receive it.
type Event struct {
	// What happened: joined, admitted, hold, sold or sold_out.
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
	KindJoined   = "joined"
	KindAdmitted = "admitted"
	KindHold     = "hold"
	KindSold     = "sold"
	KindSoldOut  = "sold_out"
)

// Sink receives events. Publish never blocks the caller: a sink queues
// and delivers in the background, dropping (and counting) what does not
// fit its bounded queue. Safe for concurrent use.
type Sink interface {
	Publish(e Event)
	// Close delivers what is queued within ctx and stops.
	Close(ctx context.Context) error
}
