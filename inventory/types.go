package inventory

import "time"

// DefaultHoldTTL is how long a hold lives when neither the event nor the
// request names a TTL.
const DefaultHoldTTL = 480 * time.Second

// DefaultMaxHoldFactor is an event's default maximum total hold time
// (max_hold_seconds) as a multiple of its hold TTL, at most MaxHoldTTL.
const DefaultMaxHoldFactor = 3

// Limits on the size of definitions and requests. They bound the work one
// atomic step can do, so that no single request can stall a store.
const (
	MaxSections       = 1000
	MaxRowsPerSection = 1000
	MaxSeatsPerRow    = 1000
	MaxSeatsPerEvent  = 1_000_000
	MaxPools          = 100
	MaxPoolCapacity   = 10_000_000
	MaxHoldQuantity   = 100
	MaxHoldTTL        = 24 * time.Hour
	MaxPerUserLimit   = 100_000
	MaxPriceCents     = 1_000_000_000
	MaxIDLen          = 32
	MaxEventIDLen     = 64
	MaxUserLen        = 128
	MaxKeyLen         = 255
	MaxPaymentRefLen  = 255
	MaxActorLen       = 128
)

// EventDef is the seating plan of one event: reserved-seating sections,
// general-admission pools and the rules that apply to holds.
type EventDef struct {
	// Sections are the reserved-seating blocks, front of house first.
	Sections []Section `json:"sections"`
	// GA are the general-admission pools, counted but not numbered.
	GA []Pool `json:"ga"`
	// Limits apply to every user of the event.
	Limits Limits `json:"limits"`
	// HoldTTLSeconds is the default hold lifetime; 0 means DefaultHoldTTL.
	HoldTTLSeconds int `json:"hold_ttl_seconds"`
	// MaxHoldSeconds bounds a hold's total lifetime from its creation,
	// extensions included (Store.Extend); 0 means DefaultMaxHoldFactor
	// times the hold TTL (at most MaxHoldTTL). When set, at least
	// HoldTTLSeconds.
	MaxHoldSeconds int `json:"max_hold_seconds"`
}

// Section is a block of numbered seats sold at one price.
type Section struct {
	ID         string `json:"id"`
	Tier       string `json:"tier,omitempty"`
	PriceCents int64  `json:"price_cents"`
	// Rows are listed front row first; best-available prefers earlier rows.
	Rows []Row `json:"rows"`
}

// Row is a line of seats numbered 1..Seats; seat ids are SECTION-ROW-NUMBER.
type Row struct {
	ID    string `json:"id"`
	Seats int    `json:"seats"`
}

// Pool is a general-admission area: a capacity, no seat numbers.
type Pool struct {
	ID         string `json:"id"`
	Capacity   int    `json:"capacity"`
	PriceCents int64  `json:"price_cents"`
}

// Limits are per-user rules of an event.
type Limits struct {
	// PerUser caps the seats (held and sold, GA included) one user may have
	// in the event; 0 means no limit.
	PerUser int `json:"per_user"`
}

// HoldTTL returns the event's default hold lifetime.
func (d *EventDef) HoldTTL() time.Duration {
	if d.HoldTTLSeconds <= 0 {
		return DefaultHoldTTL
	}
	return time.Duration(d.HoldTTLSeconds) * time.Second
}

// MaxHold returns the longest a hold of the event may live from its
// creation, extensions included.
func (d *EventDef) MaxHold() time.Duration {
	if d.MaxHoldSeconds <= 0 {
		return min(DefaultMaxHoldFactor*d.HoldTTL(), MaxHoldTTL)
	}
	return time.Duration(d.MaxHoldSeconds) * time.Second
}

// Event is a stored event definition.
type Event struct {
	ID string `json:"event"`
	EventDef
	// Seats is the number of numbered seats; GACapacity the sum of pools.
	Seats      int `json:"seats"`
	GACapacity int `json:"ga_capacity"`
}

// HoldRequest asks for seats in one of three ways: explicit Seats, Best
// available, or a GA pool. Exactly one must be set.
type HoldRequest struct {
	User  string       `json:"user"`
	Seats []string     `json:"seats,omitempty"`
	Best  *BestRequest `json:"best,omitempty"`
	GA    *GARequest   `json:"ga,omitempty"`
	// TTLSeconds overrides the event's hold TTL (HTTP form).
	TTLSeconds int `json:"ttl_seconds,omitempty"`

	// TTL overrides the event's hold TTL with millisecond precision; when
	// zero, TTLSeconds and then the event default apply.
	TTL time.Duration `json:"-"`
	// IdempotencyKey makes a retry return the original result.
	IdempotencyKey string `json:"-"`
	// Actor names who made the call, for the audit stream.
	Actor string `json:"-"`
}

// BestRequest asks for Quantity adjacent seats in one row of a section, or
// of any section of a price tier.
type BestRequest struct {
	Section  string `json:"section,omitempty"`
	Tier     string `json:"tier,omitempty"`
	Quantity int    `json:"quantity"`
}

// GARequest asks for Quantity places in a general-admission pool.
type GARequest struct {
	Pool     string `json:"pool"`
	Quantity int    `json:"quantity"`
}

// HoldStatus is where a hold is in its life.
type HoldStatus string

// Hold statuses.
const (
	HoldHeld      HoldStatus = "held"
	HoldConfirmed HoldStatus = "confirmed"
	HoldReleased  HoldStatus = "released"
	HoldExpired   HoldStatus = "expired"
)

// Hold is a time-limited claim on seats or GA places.
type Hold struct {
	ID         string     `json:"hold_id"`
	Event      string     `json:"event"`
	User       string     `json:"user"`
	Seats      []string   `json:"seats"`
	Pool       string     `json:"pool,omitempty"`
	Quantity   int        `json:"quantity"`
	PriceCents int64      `json:"price_cents"`
	CreatedAt  time.Time  `json:"created_at"`
	ExpiresAt  time.Time  `json:"expires_at"`
	Status     HoldStatus `json:"status"`
	OrderID    string     `json:"order_id,omitempty"`

	// Replayed is true when the result was returned for a repeated
	// idempotency key rather than computed now.
	Replayed bool `json:"-"`
}

// ConfirmRequest turns a hold into an order.
type ConfirmRequest struct {
	PaymentRef     string `json:"payment_ref"`
	IdempotencyKey string `json:"-"`
	Actor          string `json:"-"`
}

// ReleaseRequest gives a hold's seats back.
type ReleaseRequest struct {
	IdempotencyKey string `json:"-"`
	Actor          string `json:"-"`
}

// Release is the outcome of a release: the hold's seats are not held any
// more. HoldStatus tells what the hold itself is now (released or expired).
type Release struct {
	HoldID     string     `json:"hold_id"`
	Event      string     `json:"event"`
	Status     string     `json:"status"`
	HoldStatus HoldStatus `json:"hold_status"`
	Replayed   bool       `json:"-"`
}

// ExtendRequest keeps a live hold alive for longer: its expiry becomes
// TTL (or TTLSeconds, or the event's hold TTL) from now, never earlier
// than it was and never later than the hold's creation plus the event's
// MaxHold. Repeating it is harmless: it does not add up.
type ExtendRequest struct {
	// TTLSeconds is how long from now the hold should live (HTTP form);
	// 0 means the event's hold TTL.
	TTLSeconds int `json:"ttl_seconds,omitempty"`
	// TTL is TTLSeconds with millisecond precision; when zero,
	// TTLSeconds and then the event default apply.
	TTL            time.Duration `json:"-"`
	IdempotencyKey string        `json:"-"`
	Actor          string        `json:"-"`
}

// CancelRequest returns a sold order's seats to sale.
type CancelRequest struct {
	Reason string `json:"reason,omitempty"`
	Actor  string `json:"-"`
}

// OrderStatus is where an order is in its life.
type OrderStatus string

// Order statuses.
const (
	OrderConfirmed OrderStatus = "confirmed"
	OrderCancelled OrderStatus = "cancelled"
)

// Order is a confirmed sale of a hold's seats.
type Order struct {
	ID          string      `json:"order_id"`
	HoldID      string      `json:"hold_id"`
	Event       string      `json:"event"`
	User        string      `json:"user"`
	Seats       []string    `json:"seats"`
	Pool        string      `json:"pool,omitempty"`
	Quantity    int         `json:"quantity"`
	PriceCents  int64       `json:"price_cents"`
	PaymentRef  string      `json:"payment_ref,omitempty"`
	Status      OrderStatus `json:"status"`
	ConfirmedAt time.Time   `json:"confirmed_at"`
	CancelledAt *time.Time  `json:"cancelled_at,omitempty"`
	Replayed    bool        `json:"-"`
}

// Counts are seat or place counts by state.
type Counts struct {
	Available int `json:"available"`
	Held      int `json:"held"`
	Sold      int `json:"sold"`
}

// PoolCounts are a GA pool's counts and its capacity.
type PoolCounts struct {
	Capacity int `json:"capacity"`
	Counts
}

// Availability summarises an event. The top-level counts include both
// numbered seats and GA places.
type Availability struct {
	Event string `json:"event"`
	Counts
	Sections map[string]Counts     `json:"sections"`
	GA       map[string]PoolCounts `json:"ga"`
}

// SeatStatus is the state of one numbered seat.
type SeatStatus string

// Seat statuses.
const (
	SeatAvailable SeatStatus = "available"
	SeatHeld      SeatStatus = "held"
	SeatSold      SeatStatus = "sold"
)

// SeatState is one seat in a SeatMap.
type SeatState struct {
	ID     string     `json:"id"`
	Status SeatStatus `json:"status"`
}

// SeatMap is the status of every seat of one section, rows in order.
type SeatMap struct {
	Event   string      `json:"event"`
	Section string      `json:"section"`
	Seats   []SeatState `json:"seats"`
}

// Audit actions.
const (
	ActionDefine  = "define"
	ActionHold    = "hold"
	ActionConfirm = "confirm"
	ActionRelease = "release"
	ActionExpire  = "expire"
	ActionExtend  = "extend"
	ActionCancel  = "cancel"
)

// AuditEntry records one change: who, what, when.
type AuditEntry struct {
	// ID is an opaque cursor; pass it as `after` to read what follows.
	ID       string    `json:"id"`
	At       time.Time `json:"at"`
	Action   string    `json:"action"`
	Actor    string    `json:"actor,omitempty"`
	User     string    `json:"user,omitempty"`
	HoldID   string    `json:"hold_id,omitempty"`
	OrderID  string    `json:"order_id,omitempty"`
	Seats    []string  `json:"seats,omitempty"`
	Pool     string    `json:"pool,omitempty"`
	Quantity int       `json:"quantity,omitempty"`
}

// AuditPage is a slice of the audit stream. Next is the cursor to continue
// from (equal to the last entry's ID, or the given cursor when empty).
type AuditPage struct {
	Event   string       `json:"event"`
	Entries []AuditEntry `json:"entries"`
	Next    string       `json:"next"`
}

// DefaultAuditPage and MaxAuditPage bound how many entries one read returns.
const (
	DefaultAuditPage = 100
	MaxAuditPage     = 1000
)
