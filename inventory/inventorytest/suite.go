// Run, the suite's one entry point, and the fixtures and helpers every
// group of cases shares. The cases sit by concern: events.go, holds.go,
// best.go (best available), confirms.go (confirm, release, cancel),
// extend.go (extending holds), reaping.go (expiry), idempotency.go,
// audit.go (audit stream, seat map) and persistence.go; crash.go,
// linearizability.go (the model) and linhistory.go (the histories) hold
// the checks the stores' own tests run under crashes and concurrent load.

package inventorytest

import (
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/waitroom/waitroom/inventory"
)

// Harness tells the suite how to get stores.
type Harness struct {
	// New returns a store to test. Tests use fresh event ids, so stores
	// may share a backend.
	New func(t *testing.T) inventory.Store
	// Reopen closes s and returns a store over the same durable state.
	Reopen func(t *testing.T, s inventory.Store) inventory.Store
}

// Run runs the conformance suite against the stores of h.
func Run(t *testing.T, h Harness) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s inventory.Store)
	}{
		{"DefineAndGet", testDefineAndGet},
		{"DefineInvalid", testDefineInvalid},
		{"UnknownEvent", testUnknownEvent},
		{"HoldExplicit", testHoldExplicit},
		{"HoldAllOrNothing", testHoldAllOrNothing},
		{"HoldUnknownSeat", testHoldUnknownSeat},
		{"HoldInvalid", testHoldInvalid},
		{"HoldTTL", testHoldTTL},
		{"BestFrontRowCentre", testBestFrontRowCentre},
		{"BestAvoidsOrphans", testBestAvoidsOrphans},
		{"BestTier", testBestTier},
		{"BestSoldOut", testBestSoldOut},
		{"BestMatchesReference", testBestMatchesReference},
		{"GA", testGA},
		{"UserLimit", testUserLimit},
		{"Confirm", testConfirm},
		{"ConfirmExpired", testConfirmExpired},
		{"ConfirmReleased", testConfirmReleased},
		{"Release", testRelease},
		{"Cancel", testCancel},
		{"Extend", testExtend},
		{"ExtendDefaultMax", testExtendDefaultMax},
		{"ExtendEnded", testExtendEnded},
		{"ExtendIdempotent", testExtendIdempotent},
		{"ExtendOutlivesFirstExpiry", testExtendOutlivesFirstExpiry},
		{"LazyExpiry", testLazyExpiry},
		{"Reap", testReap},
		{"IdempotentHold", testIdempotentHold},
		{"IdempotentConfirmRelease", testIdempotentConfirmRelease},
		{"UpdateEvent", testUpdateEvent},
		{"Audit", testAudit},
		{"SeatMap", testSeatMap},
		{"HotSeats", testHotSeats},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := h.New(t)
			tc.fn(t, s)
		})
	}
	if h.Reopen != nil {
		t.Run("Persistence", func(t *testing.T) { testPersistence(t, h) })
	}
}

var ctx = context.Background()

// NewEventID returns a fresh event id so tests never share state.
func NewEventID() string {
	var b [6]byte
	crand.Read(b[:])
	return "ev-" + hex.EncodeToString(b[:])
}

// Theatre is a small plan used throughout: section A (gold, 3 rows of 10),
// section B (gold, 2 rows of 6), section C (silver, 1 row of 5), GA pool
// floor of 10.
func Theatre() inventory.EventDef {
	return inventory.EventDef{
		Sections: []inventory.Section{
			{ID: "A", Tier: "gold", PriceCents: 15000, Rows: []inventory.Row{{ID: "1", Seats: 10}, {ID: "2", Seats: 10}, {ID: "3", Seats: 10}}},
			{ID: "B", Tier: "gold", PriceCents: 12000, Rows: []inventory.Row{{ID: "1", Seats: 6}, {ID: "2", Seats: 6}}},
			{ID: "C", Tier: "silver", PriceCents: 5000, Rows: []inventory.Row{{ID: "1", Seats: 5}}},
		},
		GA: []inventory.Pool{{ID: "floor", Capacity: 10, PriceCents: 9000}},
	}
}

func define(t *testing.T, s inventory.Store, def inventory.EventDef) string {
	t.Helper()
	id := NewEventID()
	if _, err := s.PutEvent(ctx, id, def, "test"); err != nil {
		t.Fatalf("PutEvent: %v", err)
	}
	return id
}

func hold(t *testing.T, s inventory.Store, ev string, req inventory.HoldRequest) inventory.Hold {
	t.Helper()
	h, err := s.Hold(ctx, ev, req)
	if err != nil {
		t.Fatalf("Hold(%+v): %v", req, err)
	}
	return h
}

func seats(user string, ids ...string) inventory.HoldRequest {
	return inventory.HoldRequest{User: user, Seats: ids}
}

func best(user, section string, n int) inventory.HoldRequest {
	return inventory.HoldRequest{User: user, Best: &inventory.BestRequest{Section: section, Quantity: n}}
}

func ga(user, pool string, n int) inventory.HoldRequest {
	return inventory.HoldRequest{User: user, GA: &inventory.GARequest{Pool: pool, Quantity: n}}
}

func wantErr(t *testing.T, err, kind error) *inventory.Error {
	t.Helper()
	if !errors.Is(err, kind) {
		t.Fatalf("error = %v, want %v", err, kind)
	}
	return inventory.Details(err)
}

func counts(t *testing.T, s inventory.Store, ev string) inventory.Availability {
	t.Helper()
	a, err := s.Availability(ctx, ev)
	if err != nil {
		t.Fatalf("Availability: %v", err)
	}
	return a
}

func wantCounts(t *testing.T, got inventory.Counts, avail, held, sold int) {
	t.Helper()
	if got != (inventory.Counts{Available: avail, Held: held, Sold: sold}) {
		t.Fatalf("counts = %+v, want available %d held %d sold %d", got, avail, held, sold)
	}
}

func seatStatus(t *testing.T, s inventory.Store, ev, seat string) inventory.SeatStatus {
	t.Helper()
	sec, _, _, _ := inventory.ParseSeatID(seat)
	m, err := s.SeatMap(ctx, ev, sec)
	if err != nil {
		t.Fatalf("SeatMap: %v", err)
	}
	for _, st := range m.Seats {
		if st.ID == seat {
			return st.Status
		}
	}
	t.Fatalf("seat %s not in the seat map", seat)
	return ""
}

// expireSoon is a TTL short enough to wait out in a test; tests only ever
// assert that such a hold HAS expired, never that it is still live.
const expireSoon = 40 * time.Millisecond

func waitExpiry() { time.Sleep(3 * expireSoon) }

func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)) }
