package inventory

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"strings"
	"time"
)

// Store is the seat-hold engine's state. Every method is one atomic step:
// it happens entirely or not at all, and concurrent calls behave as if they
// ran one after another. Implementations treat a hold whose expiry has
// passed as gone in every method, so correctness never waits for Reap.
// Implementations are safe for concurrent use.
type Store interface {
	// PutEvent defines an event or updates its definition. An update that
	// would remove or shrink below a held or sold seat or GA place fails
	// with ErrDefinitionConflict and changes nothing.
	PutEvent(ctx context.Context, event string, def EventDef, actor string) (Event, error)
	// Event returns a stored definition.
	Event(ctx context.Context, event string) (Event, error)
	// Events lists the ids of every defined event.
	Events(ctx context.Context) ([]string, error)

	// Hold claims seats or GA places, all or nothing.
	Hold(ctx context.Context, event string, req HoldRequest) (Hold, error)
	// GetHold returns a hold with its current status.
	GetHold(ctx context.Context, event, hold string) (Hold, error)
	// Confirm sells a live hold's seats. Confirming a confirmed hold
	// returns the same order.
	Confirm(ctx context.Context, event, hold string, req ConfirmRequest) (Order, error)
	// Release gives a hold's seats back; releasing a released or expired
	// hold succeeds and changes nothing.
	Release(ctx context.Context, event, hold string, req ReleaseRequest) (Release, error)
	// Extend moves a live hold's expiry later (ExtendRequest), bounded
	// by the event's MaxHold from the hold's creation; at that bound it
	// succeeds and changes nothing. A confirmed, released or expired hold
	// cannot be extended (ErrHoldConfirmed, ErrHoldReleased,
	// ErrHoldExpired).
	Extend(ctx context.Context, event, hold string, req ExtendRequest) (Hold, error)
	// Cancel returns a sold order's seats to sale; cancelling a cancelled
	// order succeeds and changes nothing.
	Cancel(ctx context.Context, event, order string, req CancelRequest) (Order, error)
	// GetOrder returns an order.
	GetOrder(ctx context.Context, event, order string) (Order, error)

	// Availability counts seats and places by state.
	Availability(ctx context.Context, event string) (Availability, error)
	// SeatMap returns every seat of a section with its state.
	SeatMap(ctx context.Context, event, section string) (SeatMap, error)
	// Audit returns up to limit entries after the cursor ("" = start).
	Audit(ctx context.Context, event, after string, limit int) (AuditPage, error)

	// Reap expires up to max holds whose time has passed and returns how
	// many it expired. It only tidies up: every other method already
	// treats such holds as expired.
	Reap(ctx context.Context, event string, max int) (int, error)

	// Ping reports whether the store can serve requests and make changes
	// durable (for readiness checks); it changes nothing.
	Ping(ctx context.Context) error

	// Close releases the store's resources.
	Close() error
}

var idEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// NewID returns prefix + "_" + 128 random bits in lower-case base32.
func NewID(prefix string) string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("inventory: no randomness: " + err.Error())
	}
	return prefix + "_" + idEncoding.EncodeToString(b[:])
}

// Prefixes of generated ids.
const (
	HoldIDPrefix  = "hld"
	OrderIDPrefix = "ord"
)

// UnixMilli converts milliseconds since the epoch to a UTC time.
func UnixMilli(ms int64) time.Time { return time.UnixMilli(ms).UTC() }

// JoinSeats and SplitSeats convert between a seat list and the compact
// comma-separated form stores keep.
func JoinSeats(seats []string) string { return strings.Join(seats, ",") }

// SplitSeats is the inverse of JoinSeats; an empty string is no seats.
func SplitSeats(s string) []string {
	if s == "" {
		return []string{}
	}
	return strings.Split(s, ",")
}
