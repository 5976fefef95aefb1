package inventory

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors; test with errors.Is. Each has a stable code (see Code)
// that the HTTP API and the Redis scripts use on the wire.
var (
	ErrInvalid             = errors.New("inventory: invalid request")
	ErrEventNotFound       = errors.New("inventory: event not found")
	ErrSectionNotFound     = errors.New("inventory: section not found")
	ErrTierNotFound        = errors.New("inventory: tier not found")
	ErrPoolNotFound        = errors.New("inventory: pool not found")
	ErrSeatNotFound        = errors.New("inventory: seat not found")
	ErrHoldNotFound        = errors.New("inventory: hold not found")
	ErrOrderNotFound       = errors.New("inventory: order not found")
	ErrSeatUnavailable     = errors.New("inventory: seat unavailable")
	ErrSoldOut             = errors.New("inventory: sold out")
	ErrNotEnoughSeats      = errors.New("inventory: not enough seats")
	ErrUserLimit           = errors.New("inventory: user limit reached")
	ErrHoldExpired         = errors.New("inventory: hold expired")
	ErrHoldReleased        = errors.New("inventory: hold released")
	ErrHoldConfirmed       = errors.New("inventory: hold already confirmed")
	ErrOrderCancelled      = errors.New("inventory: order cancelled")
	ErrIdempotencyMismatch = errors.New("inventory: idempotency key reused for a different request")
	ErrDefinitionConflict  = errors.New("inventory: definition would drop held or sold inventory")
	// ErrUnavailable means the store cannot serve requests (its journal
	// failed, or its backend is unreachable). The outcome of the request
	// is unknown: retry it with the same idempotency key.
	ErrUnavailable = errors.New("inventory: store unavailable")
)

var codes = []struct {
	err  error
	code string
}{
	{ErrInvalid, "invalid_request"},
	{ErrEventNotFound, "event_not_found"},
	{ErrSectionNotFound, "section_not_found"},
	{ErrTierNotFound, "tier_not_found"},
	{ErrPoolNotFound, "pool_not_found"},
	{ErrSeatNotFound, "seat_not_found"},
	{ErrHoldNotFound, "hold_not_found"},
	{ErrOrderNotFound, "order_not_found"},
	{ErrSeatUnavailable, "seat_unavailable"},
	{ErrSoldOut, "sold_out"},
	{ErrNotEnoughSeats, "not_enough_seats"},
	{ErrUserLimit, "user_limit"},
	{ErrHoldExpired, "hold_expired"},
	{ErrHoldReleased, "hold_released"},
	{ErrHoldConfirmed, "hold_confirmed"},
	{ErrOrderCancelled, "order_cancelled"},
	{ErrIdempotencyMismatch, "idempotency_mismatch"},
	{ErrDefinitionConflict, "definition_conflict"},
	{ErrUnavailable, "unavailable"},
}

// Code returns the wire code of err's sentinel ("seat_unavailable"), or ""
// when err wraps none.
func Code(err error) string {
	for _, c := range codes {
		if errors.Is(err, c.err) {
			return c.code
		}
	}
	return ""
}

// FromCode returns the sentinel for a wire code, or nil.
func FromCode(code string) error {
	for _, c := range codes {
		if c.code == code {
			return c.err
		}
	}
	return nil
}

// Error carries a sentinel (Kind) and the details a caller needs to act on
// it. Every field is safe to show to the API's client.
type Error struct {
	Kind error
	// Message is a human explanation, safe for clients.
	Message string
	// Seats lists the unavailable, unknown or blocking seats.
	Seats []string
	// Pools lists blocking GA pools (definition conflicts).
	Pools []string
	// Limit and Current describe a user_limit error.
	Limit, Current int
	// Available is how many seats or places are free (not_enough_seats).
	Available int
}

func (e *Error) Error() string {
	msg := e.Message
	if msg == "" && e.Kind != nil {
		msg = strings.TrimPrefix(e.Kind.Error(), "inventory: ")
	}
	if len(e.Seats) > 0 {
		return fmt.Sprintf("inventory: %s: %s", msg, strings.Join(e.Seats, ", "))
	}
	return "inventory: " + msg
}

// Unwrap lets errors.Is match the sentinel.
func (e *Error) Unwrap() error { return e.Kind }

// Errorf returns an *Error of the given kind with a formatted message.
func Errorf(kind error, format string, args ...any) *Error {
	return &Error{Kind: kind, Message: fmt.Sprintf(format, args...)}
}

// Details returns the *Error inside err, or one built from its sentinel.
func Details(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	for _, c := range codes {
		if errors.Is(err, c.err) {
			return &Error{Kind: c.err}
		}
	}
	return &Error{Kind: ErrUnavailable}
}
