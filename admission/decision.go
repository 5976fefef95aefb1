package admission

import "time"

// Reason says why the controller set the limit it did at a tick. The
// values are part of the operator contract (/metrics labels, the admin
// API's JSON): extend the set, never rename a value.
type Reason string

// The controller's reasons.
const (
	// ReasonStart: the first tick; the limit is initial_active.
	ReasonStart Reason = "start"
	// ReasonNoData: nothing was measured at the origin (no admitted
	// traffic yet, or too few requests to trust); the limit holds.
	ReasonNoData Reason = "no_data"
	// ReasonProbe: the origin answers at its unloaded latency and the
	// limit is in use, so the limit grows to find what the origin takes.
	ReasonProbe Reason = "probe"
	// ReasonSteady: the origin runs at the target latency; the limit
	// follows the capacity measured there.
	ReasonSteady Reason = "steady"
	// ReasonQueueing: the origin's latency rose above its baseline (a
	// line formed there); the limit is sized to what it serves at the
	// target latency.
	ReasonQueueing Reason = "queueing"
	// ReasonTail: the origin's p95 neared twice its baseline p95 (a
	// share of requests waits a whole service time) although its mean
	// did not; the target eases a little each tick.
	ReasonTail Reason = "tail"
	// ReasonLatency: the p95 is above target_p95; the limit is cut.
	ReasonLatency Reason = "latency"
	// ReasonErrors: the error rate is above target_error_rate; the limit
	// is cut.
	ReasonErrors Reason = "errors"
	// ReasonIdle: fewer visitors use the room than the limit allows (the
	// queue is empty, or a cap or the inventory binds); the limit drifts
	// down towards what is in use.
	ReasonIdle Reason = "idle"
	// ReasonSoldOut: the linked inventory is empty; nobody is let in.
	ReasonSoldOut Reason = "sold_out"
)

// Reasons lists every Reason, for metrics that export a series per
// reason.
var Reasons = []Reason{ReasonStart, ReasonNoData, ReasonProbe, ReasonSteady, ReasonQueueing, ReasonTail,
	ReasonLatency, ReasonErrors, ReasonIdle, ReasonSoldOut}

// Bound names what bounded the admissions of a tick below the room the
// limit left.
type Bound string

// The bounds.
const (
	BoundNone      Bound = ""                   // the limit alone
	BoundMaxActive Bound = "max_active"         // caps.max_active held the limit down
	BoundPerMinute Bound = "max_new_per_minute" // the caps.max_new_per_minute pace
	BoundInventory Bound = "inventory"          // the seats left
	BoundWaiting   Bound = "waiting"            // nobody else was waiting
)

// Decision is one tick's decision with the figures behind it: what the
// operator's console and /metrics show, and what a post-mortem reads.
type Decision struct {
	At     time.Time
	Reason Reason
	// Limit is the active-visitor limit decided; Admit the visitors let
	// in at this tick (expected arrivals) and Slots the pass-through
	// slots offered.
	Limit, Admit, Slots int
	// Bound is what held Admit below the room the limit left.
	Bound Bound
	// Usage is what occupied the limit: Active visitors seen at the
	// origin plus Pending ones expected to come.
	Usage, Active, Pending float64
	// Latency is the origin's recent mean latency and BaseLatency its
	// unloaded baseline; P95 the recent p95.
	Latency, BaseLatency, P95 time.Duration
	// RequestRate is the origin's recent rate of requests from admitted
	// visitors, and Capacity the rate it was last measured to serve at
	// its limit (0: not measured yet).
	RequestRate, Capacity float64
	ErrorRate             float64
	// Target is the active visitors the origin is to carry (the limit
	// less the room kept for visitors on their way); Think the time a
	// visitor spends between two requests, measured by Little's law.
	Target float64
	Think  time.Duration
}
