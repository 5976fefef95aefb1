package admission

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"time"
)

// VisitorID is a visitor's identity in one event: 128 random bits minted
// by waitroom at join, never chosen by the visitor.
type VisitorID [16]byte

// NewVisitorID returns a fresh random visitor id.
func NewVisitorID() VisitorID {
	var v VisitorID
	if _, err := rand.Read(v[:]); err != nil {
		panic("admission: no randomness: " + err.Error())
	}
	return v
}

// String is the id in lower-case hex (32 characters).
func (v VisitorID) String() string { return hex.EncodeToString(v[:]) }

// ParseVisitorID reads the hex form.
func ParseVisitorID(s string) (VisitorID, error) {
	var v VisitorID
	if len(s) != 32 {
		return v, ErrBadVisitor
	}
	if _, err := hex.Decode(v[:], []byte(s)); err != nil {
		return v, ErrBadVisitor
	}
	return v, nil
}

// State is where an event's queue is in its life.
type State string

// Event states. Paused is set by an operator and stops admissions (and
// nothing else); maintenance stops admissions too and shows every gated
// request the maintenance page; passthrough lets everyone straight in;
// closed and sold_out are final for the queue.
const (
	StateScheduled State = "scheduled" // before queue_opens_at
	StatePrequeue  State = "prequeue"  // queue open, before on_sale_at
	StateSelling   State = "selling"   // on sale: tranches drawn, visitors admitted
	StateSoldOut   State = "sold_out"  // the linked inventory has nothing left
	StateClosed    State = "closed"    // after closes_at, or closed by an operator
	StatePaused    State = "paused"    // an operator stopped admissions for now
	// StateMaintenance: an operator took the site down for maintenance:
	// gated requests get the maintenance page (503), nobody is admitted,
	// queued visitors keep their places.
	StateMaintenance State = "maintenance"
	// StatePassthrough: an operator opened the gate: every visitor goes
	// straight through, and those queued are let in at once.
	StatePassthrough State = "passthrough"
)

// admitting reports whether the state lets visitors in.
func (s State) admitting() bool { return s == StateSelling || s == StatePassthrough }

// Mode is how an event's room admits (see the Mode constants).
type Mode string

// Modes of an event.
const (
	// ModeAlways queues everyone: every visitor joins the queue and is
	// admitted in drawn order (today's behaviour; a pre-queue when the
	// queue opens before the on-sale).
	ModeAlways Mode = "always"
	// ModeThreshold lets visitors without a pass straight through while
	// the origin is healthy, the active visitors are below the
	// controller's limit and the caps, and nobody is queued; once a
	// limit is crossed new visitors queue, and the room drains back to
	// pass-through when the queue is empty, without reordering anyone.
	ModeThreshold Mode = "threshold"
	// ModeScheduled is a pre-queue drawn at the on-sale (which must be
	// set), then queueing as ModeAlways.
	ModeScheduled Mode = "scheduled"
)

// Valid reports whether m is one of the modes ("" is not).
func (m Mode) Valid() bool { return m == ModeAlways || m == ModeThreshold || m == ModeScheduled }

// StatusKind is what a visitor's status call says.
type StatusKind string

// Status kinds, the contract of GET /_wr/api/status.
const (
	StatusScheduled      StatusKind = "scheduled"
	StatusPrequeue       StatusKind = "prequeue"
	StatusWaitingForDraw StatusKind = "waiting_for_draw"
	StatusWaiting        StatusKind = "waiting"
	StatusAdmitted       StatusKind = "admitted"
	StatusSoldOut        StatusKind = "sold_out"
	StatusPaused         StatusKind = "paused"
	StatusClosed         StatusKind = "closed"
)

// PublicLane is the lane every event has.
const PublicLane = "public"

// Defaults of EventConfig.
const (
	DefaultTranche         = 5 * time.Second
	DefaultSessionDuration = 10 * time.Minute
	DefaultNoShowGrace     = 2 * time.Minute
	DefaultTick            = time.Second
	DefaultVisitorsPerSeat = 1.5
	DefaultRefresh         = 5 * time.Second
	DefaultCompleteGrace   = 30 * time.Second
	// DefaultMaxSessionFactor is MaxSession's default as a multiple of
	// SessionDuration.
	DefaultMaxSessionFactor = 3
)

// EventConfig is one event's queue: its schedule, lanes, caps and the
// controller that sizes admission. It comes from the configuration file;
// the engine does not change it (operators change Control instead).
type EventConfig struct {
	ID string
	// Mode is how the room admits (default ModeAlways).
	Mode Mode
	// QueueOpensAt is when visitors may join; OnSaleAt when the pre-queue
	// is drawn and admission starts; ClosesAt (zero: never) when the queue
	// closes. A zero OnSaleAt (not allowed in ModeScheduled, and then
	// QueueOpensAt must be zero too) means open from the start: the
	// engine anchors the tranches at OpenEpoch, the same on every
	// replica, and nobody is pre-queued.
	QueueOpensAt, OnSaleAt, ClosesAt time.Time
	// Tranche is how long the arrivals grouped into one draw span after
	// the on-sale (default 5 s).
	Tranche time.Duration
	// SessionDuration is how long a pass is valid (default 10 min).
	SessionDuration time.Duration
	// MaxSession is the longest an admitted visitor's session may last
	// while their pass is renewed by activity (RenewPass): a pass slides
	// forward by up to SessionDuration but never past AdmittedAt plus
	// MaxSession. Zero means DefaultMaxSessionFactor times
	// SessionDuration; a value below SessionDuration is SessionDuration
	// (no renewal).
	MaxSession time.Duration
	// NoShowGrace is how long a visitor whose number is reached may take
	// to come (poll and take the pass) before counting as a no-show
	// (default 2 min).
	NoShowGrace time.Duration
	// CompleteGrace is how long a visitor's pass keeps working after
	// their origin answered X-Waitroom-Complete (default 30 s): the
	// purchase's last pages still load, then the pass stops, and no status
	// poll mints the visitor another one.
	CompleteGrace time.Duration
	// Lanes, besides the public lane (added when missing).
	Lanes []LaneConfig
	// Caps bound admission whatever the controller says.
	Caps Caps
	// VisitorsPerSeat bounds admitted-but-not-done visitors by the linked
	// inventory's remaining seats times this factor (default 1.5).
	VisitorsPerSeat float64
	// InventoryEvent links the event to a seat-hold sidecar event ("": not
	// linked; no inventory bound, no sold-out).
	InventoryEvent string
	// Controller tunes admission sized by measured origin throughput.
	Controller ControllerConfig

	// openFromStart is set by the engine when OnSaleAt was zero.
	openFromStart bool
}

// OpenFromStart reports whether the event is open from the start (it was
// configured without OnSaleAt; see EventConfig).
func (c *EventConfig) OpenFromStart() bool { return c.openFromStart }

// LaneConfig is a queue within an event with its own numbers and its own
// share of each tick's admissions.
type LaneConfig struct {
	// Name is the lane's id ("public", "presale").
	Name string
	// Priority lanes are served first, in order, until they have nobody
	// waiting; the other lanes then share what is left by Share.
	Priority bool
	// Share is this lane's weight among the non-priority lanes that have
	// visitors waiting (e.g. 0.7 and 0.3). A lane with nobody waiting
	// gives its share to the others.
	Share float64
	// Access controls who may join a non-public lane.
	Access LaneAccess
}

// LaneAccess is how a visitor proves they belong in a presale lane:
// either credential admits.
type LaneAccess struct {
	// InviteSecret verifies signed invite codes (each usable once).
	InviteSecret []byte
	// AccountSecret verifies account proofs (HMAC of event and account id
	// by the origin); with Allowlist, the account must also be listed.
	AccountSecret []byte
	// Allowlist is the set of account ids admitted to the lane.
	Allowlist *Allowlist
}

// Caps are hard limits from configuration (or an operator).
type Caps struct {
	// MaxActive caps visitors holding a valid pass at once (0: no cap).
	MaxActive int
	// MaxNewPerMinute caps newly admitted visitors per minute (0: no cap).
	MaxNewPerMinute int
}

// ControllerConfig tunes the AIMD controller.
type ControllerConfig struct {
	// Tick is how often the controller runs (default 1 s).
	Tick time.Duration
	// TargetP95 is the origin latency whose crossing cuts the limit,
	// whatever the origin's baseline (default 800 ms).
	TargetP95 time.Duration
	// TargetErrorRate is the share of 5xx and timeouts tolerated (default 0.01).
	TargetErrorRate float64
	// InitialActive is the active-visitor limit at the start (default 20),
	// from which the slow start doubles it per round.
	InitialActive int
	// MinActive is the limit's floor (default 10).
	MinActive int
	// Increase bounds how much the target may grow per tick while the
	// origin answers at its baseline (0: no bound beyond the
	// controller's own).
	Increase int
	// Decrease is the deepest a single tick may cut the target to, as a
	// factor of the last (default 0.5).
	Decrease float64
	// ExpectedRate is how many visitors a minute the operator expects
	// the origin to take (0: unknown). Before the admission rate is
	// measured, ETAs are estimated from it (or, without it, from the
	// limit over the session duration) and shown as a wider range.
	ExpectedRate float64
}

// Control is what an operator may change at run time.
type Control struct {
	Paused  bool `json:"paused,omitempty"`
	Closed  bool `json:"closed,omitempty"`
	SoldOut bool `json:"sold_out,omitempty"`
	// Maintenance shows gated requests the maintenance page and stops
	// admission (see StateMaintenance).
	Maintenance bool `json:"maintenance,omitempty"`
	// Passthrough lets everyone straight through (see StatePassthrough).
	Passthrough bool `json:"passthrough,omitempty"`
	// Mode, when set, replaces the configured mode.
	Mode Mode `json:"mode,omitempty"`
	// Caps, when set, replace the configured caps.
	Caps *Caps `json:"caps,omitempty"`
	// Notice, when set, is a message for the event's visitors, shown on
	// the waiting-room page and in the status JSON.
	Notice *Notice `json:"notice,omitempty"`
}

// Measurements are what the proxy measured of the origin's traffic from
// admitted visitors during the last tick.
type Measurements struct {
	RequestRate float64       // requests per second
	LatencyP50  time.Duration // of completed requests
	LatencyP95  time.Duration
	// LatencyP99 is for the operator's console; the controller reads
	// the p95.
	LatencyP99  time.Duration
	LatencyMean time.Duration
	// Answered is how many requests the latencies are measured over
	// (the origin answered them; fractional where a window weighs its
	// oldest slot in part): a percentile of a handful is noise.
	Answered    float64
	ErrorRate   float64 // share of requests that were 5xx or timed out
	InFlight    int     // requests in progress
	Active      int     // visitors with a valid pass seen recently
	Completions int     // visitors who completed a purchase since the last tick
}

// Meter supplies an event's measurements each tick (the proxy, or a
// simulated origin).
type Meter interface {
	Measure(event string, now time.Time) Measurements
}

// Inventory tells how many seats an event has left (the seat-hold
// sidecar's availability). known is false when it cannot tell.
type Inventory interface {
	Remaining(event string) (remaining int, known bool)
}

// Errors.
var (
	ErrBadVisitor   = errors.New("admission: malformed visitor id")
	ErrUnknownEvent = errors.New("admission: unknown event")
	ErrUnknownLane  = errors.New("admission: unknown lane")
	ErrNotOpen      = errors.New("admission: the queue is not open")
	ErrClosed       = errors.New("admission: the queue is closed")
	ErrSoldOut      = errors.New("admission: sold out")
	ErrNotAllowed   = errors.New("admission: credential does not admit to this lane")
	ErrInviteUsed   = errors.New("admission: invite code already used")
	// ErrOnceUsed: a join's one-time value (JoinRequest.Once) was spent
	// before.
	ErrOnceUsed     = errors.New("admission: one-time value already spent")
	ErrBadToken     = errors.New("admission: invalid token")
	ErrExpiredToken = errors.New("admission: expired token")
	ErrWrongEvent   = errors.New("admission: token is for another event")
	ErrWrongBinding = errors.New("admission: token is bound to another device")
	ErrRevoked      = errors.New("admission: pass revoked")
	ErrDrawConflict = errors.New("admission: draw does not follow the last one")
	// ErrRecordConflict: an event record changed since it was read.
	ErrRecordConflict = errors.New("admission: the event record changed since it was read")
	// ErrRecordTooLarge: an event record's body exceeds MaxEventRecord.
	ErrRecordTooLarge = errors.New("admission: the event record is too large")
	ErrStoreDown      = errors.New("admission: store unavailable")
	ErrNotDrawnYet    = errors.New("admission: tranche not drawn yet")
	ErrNotInTranche   = errors.New("admission: visitor not found in its tranche")
	ErrNotLeader      = errors.New("admission: this replica does not hold the event's lease")
	ErrBadCredential  = errors.New("admission: malformed credential")
	ErrBadControl     = errors.New("admission: invalid operator control")
)
