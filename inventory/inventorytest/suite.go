package inventorytest

import (
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
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

func testDefineAndGet(t *testing.T, s inventory.Store) {
	def := Theatre()
	def.Limits.PerUser = 6
	id := NewEventID()
	got, err := s.PutEvent(ctx, id, def, "ops")
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != id || got.Seats != 30+12+5 || got.GACapacity != 10 || got.HoldTTLSeconds != 480 || got.Limits.PerUser != 6 {
		t.Fatalf("PutEvent = %+v", got)
	}
	again, err := s.Event(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(again) != fmt.Sprint(got) {
		t.Fatalf("Event = %+v, want %+v", again, got)
	}
	if err := s.Ping(ctx); err != nil {
		t.Fatalf("Ping: %v", err)
	}
	ids, err := s.Events(ctx)
	if err != nil || !slices.Contains(ids, id) {
		t.Fatalf("Events = %v, %v; want it to contain %s", ids, err, id)
	}
	a := counts(t, s, id)
	wantCounts(t, a.Counts, 57, 0, 0)
	wantCounts(t, a.Sections["A"], 30, 0, 0)
	if a.GA["floor"].Capacity != 10 {
		t.Fatalf("GA floor = %+v", a.GA["floor"])
	}
}

func testDefineInvalid(t *testing.T, s inventory.Store) {
	bad := []inventory.EventDef{
		{},
		{Sections: []inventory.Section{{ID: "A-1", Rows: []inventory.Row{{ID: "1", Seats: 1}}}}},
		{Sections: []inventory.Section{{ID: "A", Rows: []inventory.Row{{ID: "1", Seats: 0}}}}},
		{Sections: []inventory.Section{{ID: "A", Rows: []inventory.Row{{ID: "1", Seats: 2}, {ID: "1", Seats: 3}}}}},
		{Sections: []inventory.Section{{ID: "A", Rows: []inventory.Row{{ID: "1", Seats: 2}}}, {ID: "A", Rows: []inventory.Row{{ID: "1", Seats: 2}}}}},
		{GA: []inventory.Pool{{ID: "floor", Capacity: 0}}},
		{GA: []inventory.Pool{{ID: "floor", Capacity: 5}}, HoldTTLSeconds: -1},
		{GA: []inventory.Pool{{ID: "floor", Capacity: 5}}, Limits: inventory.Limits{PerUser: -1}},
		{Sections: []inventory.Section{{ID: "A", PriceCents: -5, Rows: []inventory.Row{{ID: "1", Seats: 2}}}}},
	}
	for i, def := range bad {
		id := NewEventID()
		_, err := s.PutEvent(ctx, id, def, "")
		wantErr(t, err, inventory.ErrInvalid)
		if _, err := s.Event(ctx, id); !errors.Is(err, inventory.ErrEventNotFound) {
			t.Fatalf("case %d: invalid definition was stored: %v", i, err)
		}
	}
	// Every problem is reported, with its path.
	_, err := s.PutEvent(ctx, NewEventID(), inventory.EventDef{Sections: []inventory.Section{
		{ID: "", Rows: []inventory.Row{{ID: "1", Seats: 0}}}}}, "")
	msg := wantErr(t, err, inventory.ErrInvalid).Message
	for _, want := range []string{"sections[0].id", "sections[0].rows[0].seats"} {
		if !contains(msg, want) {
			t.Fatalf("message %q lacks %q", msg, want)
		}
	}
	for _, id := range []string{"", "-x", "a b", "../x", "x}"} {
		_, err := s.PutEvent(ctx, id, Theatre(), "")
		wantErr(t, err, inventory.ErrInvalid)
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

func testUnknownEvent(t *testing.T, s inventory.Store) {
	ev := NewEventID()
	_, err := s.Event(ctx, ev)
	wantErr(t, err, inventory.ErrEventNotFound)
	_, err = s.Hold(ctx, ev, seats("u1", "A-1-1"))
	wantErr(t, err, inventory.ErrEventNotFound)
	_, err = s.GetHold(ctx, ev, "hld_x")
	wantErr(t, err, inventory.ErrEventNotFound)
	_, err = s.Confirm(ctx, ev, "hld_x", inventory.ConfirmRequest{})
	wantErr(t, err, inventory.ErrEventNotFound)
	_, err = s.Release(ctx, ev, "hld_x", inventory.ReleaseRequest{})
	wantErr(t, err, inventory.ErrEventNotFound)
	_, err = s.Cancel(ctx, ev, "ord_x", inventory.CancelRequest{})
	wantErr(t, err, inventory.ErrEventNotFound)
	_, err = s.Availability(ctx, ev)
	wantErr(t, err, inventory.ErrEventNotFound)
	_, err = s.SeatMap(ctx, ev, "A")
	wantErr(t, err, inventory.ErrEventNotFound)
	_, err = s.Audit(ctx, ev, "", 10)
	wantErr(t, err, inventory.ErrEventNotFound)
	_, err = s.Reap(ctx, ev, 10)
	wantErr(t, err, inventory.ErrEventNotFound)
}

func testHoldExplicit(t *testing.T, s inventory.Store) {
	ev := define(t, s, Theatre())
	before := time.Now()
	h := hold(t, s, ev, seats("u1", "A-1-1", "A-1-2"))
	if h.ID == "" || h.Event != ev || h.User != "u1" || h.Status != inventory.HoldHeld || h.Quantity != 2 ||
		!slices.Equal(h.Seats, []string{"A-1-1", "A-1-2"}) || h.PriceCents != 30000 || h.Pool != "" {
		t.Fatalf("hold = %+v", h)
	}
	if d := h.ExpiresAt.Sub(before); d < 479*time.Second || d > 482*time.Second {
		t.Fatalf("expires in %v, want the default 480s", d)
	}
	got, err := s.GetHold(ctx, ev, h.ID)
	if err != nil || got.Status != inventory.HoldHeld || !slices.Equal(got.Seats, h.Seats) || !got.ExpiresAt.Equal(h.ExpiresAt) {
		t.Fatalf("GetHold = %+v, %v", got, err)
	}
	a := counts(t, s, ev)
	wantCounts(t, a.Counts, 55, 2, 0)
	wantCounts(t, a.Sections["A"], 28, 2, 0)
	if st := seatStatus(t, s, ev, "A-1-2"); st != inventory.SeatHeld {
		t.Fatalf("A-1-2 is %s", st)
	}
	_, err = s.GetHold(ctx, ev, "hld_doesnotexist")
	wantErr(t, err, inventory.ErrHoldNotFound)
}

func testHoldAllOrNothing(t *testing.T, s inventory.Store) {
	ev := define(t, s, Theatre())
	hold(t, s, ev, seats("u1", "A-1-2"))
	hold(t, s, ev, seats("u2", "A-1-4"))
	_, err := s.Hold(ctx, ev, seats("u3", "A-1-1", "A-1-2", "A-1-3", "A-1-4"))
	d := wantErr(t, err, inventory.ErrSeatUnavailable)
	if !slices.Equal(d.Seats, []string{"A-1-2", "A-1-4"}) {
		t.Fatalf("unavailable = %v, want every taken seat", d.Seats)
	}
	for _, seat := range []string{"A-1-1", "A-1-3"} {
		if st := seatStatus(t, s, ev, seat); st != inventory.SeatAvailable {
			t.Fatalf("%s is %s after a failed hold", seat, st)
		}
	}
	wantCounts(t, counts(t, s, ev).Counts, 55, 2, 0)
}

func testHoldUnknownSeat(t *testing.T, s inventory.Store) {
	ev := define(t, s, Theatre())
	_, err := s.Hold(ctx, ev, seats("u1", "A-1-1", "A-1-11", "Z-1-1", "A-9-1"))
	d := wantErr(t, err, inventory.ErrSeatNotFound)
	if !slices.Equal(d.Seats, []string{"A-1-11", "Z-1-1", "A-9-1"}) {
		t.Fatalf("unknown = %v", d.Seats)
	}
	wantCounts(t, counts(t, s, ev).Counts, 57, 0, 0)
	_, err = s.Hold(ctx, ev, best("u1", "Z", 2))
	wantErr(t, err, inventory.ErrSectionNotFound)
	_, err = s.Hold(ctx, ev, inventory.HoldRequest{User: "u1", Best: &inventory.BestRequest{Tier: "bronze", Quantity: 1}})
	wantErr(t, err, inventory.ErrTierNotFound)
	_, err = s.Hold(ctx, ev, ga("u1", "balcony", 1))
	wantErr(t, err, inventory.ErrPoolNotFound)
}

func testHoldInvalid(t *testing.T, s inventory.Store) {
	ev := define(t, s, Theatre())
	bad := []inventory.HoldRequest{
		{Seats: []string{"A-1-1"}},
		{User: "u1"},
		{User: "u1", Seats: []string{}},
		{User: "u1", Seats: []string{"A-1-1", "A-1-1"}},
		{User: "u1", Seats: []string{"A11"}},
		{User: "u1", Seats: []string{"A-1-01"}},
		{User: "u1", Seats: []string{"A-1-0"}},
		{User: "u1", Seats: []string{"A-1-1"}, GA: &inventory.GARequest{Pool: "floor", Quantity: 1}},
		{User: "u1", Best: &inventory.BestRequest{Quantity: 2}},
		{User: "u1", Best: &inventory.BestRequest{Section: "A", Tier: "gold", Quantity: 2}},
		{User: "u1", Best: &inventory.BestRequest{Section: "A", Quantity: 0}},
		{User: "u1", GA: &inventory.GARequest{Pool: "floor", Quantity: inventory.MaxHoldQuantity + 1}},
		{User: "u1", Seats: []string{"A-1-1"}, TTLSeconds: 86401},
		{User: "u1", Seats: []string{"A-1-1"}, IdempotencyKey: "bad key"},
		{User: "u\x00", Seats: []string{"A-1-1"}},
	}
	for i, req := range bad {
		_, err := s.Hold(ctx, ev, req)
		if !errors.Is(err, inventory.ErrInvalid) {
			t.Fatalf("case %d (%+v): error %v, want invalid", i, req, err)
		}
	}
	wantCounts(t, counts(t, s, ev).Counts, 57, 0, 0)
}

func testHoldTTL(t *testing.T, s inventory.Store) {
	def := Theatre()
	def.HoldTTLSeconds = 60
	ev := define(t, s, def)
	before := time.Now()
	h := hold(t, s, ev, seats("u1", "A-1-1"))
	if d := h.ExpiresAt.Sub(before); d < 59*time.Second || d > 62*time.Second {
		t.Fatalf("event TTL: expires in %v, want 60s", d)
	}
	req := seats("u1", "A-1-2")
	req.TTLSeconds = 300
	h = hold(t, s, ev, req)
	if d := h.ExpiresAt.Sub(before); d < 299*time.Second || d > 302*time.Second {
		t.Fatalf("request TTL: expires in %v, want 300s", d)
	}
}

func testBestFrontRowCentre(t *testing.T, s inventory.Store) {
	ev := define(t, s, Theatre())
	h := hold(t, s, ev, best("u1", "A", 2))
	if !slices.Equal(h.Seats, []string{"A-1-5", "A-1-6"}) || h.PriceCents != 30000 {
		t.Fatalf("best 2 = %v (%d), want the centre of row 1", h.Seats, h.PriceCents)
	}
	// Row 1's free runs are now 1-4 and 7-10: any 3 there would leave a
	// single seat alone, so row 2 wins; 4-6 and 5-7 are equally central
	// and the lower number breaks the tie.
	h = hold(t, s, ev, best("u2", "A", 3))
	if !slices.Equal(h.Seats, []string{"A-2-4", "A-2-5", "A-2-6"}) {
		t.Fatalf("best 3 = %v, want A-2-4..6", h.Seats)
	}
	// Best never breaks a row: a block of 10 goes to row 3.
	h = hold(t, s, ev, best("u3", "A", 10))
	if h.Seats[0] != "A-3-1" || h.Seats[9] != "A-3-10" {
		t.Fatalf("best 10 = %v, want all of row 3", h.Seats)
	}
	// An exact fit is no orphan: 4 fill row 1's 1-4.
	h = hold(t, s, ev, best("u4", "A", 4))
	if !slices.Equal(h.Seats, []string{"A-1-1", "A-1-2", "A-1-3", "A-1-4"}) {
		t.Fatalf("best 4 = %v, want A-1-1..4", h.Seats)
	}
}

func testBestAvoidsOrphans(t *testing.T, s inventory.Store) {
	ev := define(t, s, inventory.EventDef{Sections: []inventory.Section{
		{ID: "S", Rows: []inventory.Row{{ID: "1", Seats: 5}, {ID: "2", Seats: 5}}},
	}})
	hold(t, s, ev, seats("x", "S-1-1"))
	// Row 1 has 2-5 free: any 3 there leave a single seat alone, row 2
	// has a clean choice, so row 2 wins over the front row.
	h := hold(t, s, ev, best("u1", "S", 3))
	if h.Seats[0][:4] != "S-2-" {
		t.Fatalf("best 3 = %v, want row 2 (row 1 would orphan a seat)", h.Seats)
	}
	// Row 1 still has 2-5 free: 4 fills it exactly.
	h = hold(t, s, ev, best("u2", "S", 4))
	if !slices.Equal(h.Seats, []string{"S-1-2", "S-1-3", "S-1-4", "S-1-5"}) {
		t.Fatalf("best 4 = %v, want S-1-2..5", h.Seats)
	}
	// Only orphaning choices left: taking one is still better than nothing.
	ev2 := define(t, s, inventory.EventDef{Sections: []inventory.Section{{ID: "S", Rows: []inventory.Row{{ID: "1", Seats: 3}}}}})
	h = hold(t, s, ev2, best("u1", "S", 2))
	if len(h.Seats) != 2 {
		t.Fatalf("best 2 of 3 = %v", h.Seats)
	}
}

func testBestTier(t *testing.T, s inventory.Store) {
	ev := define(t, s, Theatre())
	hold(t, s, ev, seats("x", "A-1-1", "A-1-2", "A-1-3", "A-1-4", "A-1-5", "A-1-6", "A-1-7", "A-1-8"))
	h := hold(t, s, ev, inventory.HoldRequest{User: "u1", Best: &inventory.BestRequest{Tier: "gold", Quantity: 2}})
	// A row 1 has 9-10 free (an exact fit at the row's end, no orphan);
	// front rows come before sections, and A comes before B.
	if !slices.Equal(h.Seats, []string{"A-1-9", "A-1-10"}) {
		t.Fatalf("gold 2 = %v, want A-1-9,A-1-10", h.Seats)
	}
	h = hold(t, s, ev, inventory.HoldRequest{User: "u2", Best: &inventory.BestRequest{Tier: "gold", Quantity: 4}})
	// B row 1 (front row beats A row 2): the centred 2-5 would orphan
	// seats 1 and 6, so 1-4 (tied with 3-6 on distance, lower wins).
	if !slices.Equal(h.Seats, []string{"B-1-1", "B-1-2", "B-1-3", "B-1-4"}) {
		t.Fatalf("gold 4 = %v, want B-1-1..4", h.Seats)
	}
	if h.PriceCents != 4*12000 {
		t.Fatalf("price = %d", h.PriceCents)
	}
}

func testBestSoldOut(t *testing.T, s inventory.Store) {
	ev := define(t, s, Theatre())
	hold(t, s, ev, seats("x", "C-1-1", "C-1-3", "C-1-5"))
	_, err := s.Hold(ctx, ev, best("u1", "C", 2))
	if d := wantErr(t, err, inventory.ErrNotEnoughSeats); d.Available != 2 {
		t.Fatalf("available = %d, want 2", d.Available)
	}
	hold(t, s, ev, seats("y", "C-1-2", "C-1-4"))
	_, err = s.Hold(ctx, ev, best("u1", "C", 1))
	wantErr(t, err, inventory.ErrSoldOut)
}

// testBestMatchesReference fragments sections at random and checks every
// best-available choice against BestBlock run on the store's own seat map.
func testBestMatchesReference(t *testing.T, s inventory.Store) {
	def := inventory.EventDef{Sections: []inventory.Section{
		{ID: "P", Tier: "t", Rows: []inventory.Row{{ID: "1", Seats: 7}, {ID: "2", Seats: 12}, {ID: "3", Seats: 9}, {ID: "4", Seats: 16}}},
		{ID: "Q", Tier: "t", Rows: []inventory.Row{{ID: "1", Seats: 11}, {ID: "2", Seats: 8}, {ID: "3", Seats: 13}}},
	}}
	ev := define(t, s, def)
	rng := newRand(7)
	rowsOf := func(secs []string) [][][]byte {
		out := make([][][]byte, len(secs))
		for i, sec := range secs {
			m, err := s.SeatMap(ctx, ev, sec)
			if err != nil {
				t.Fatal(err)
			}
			k := 0
			for _, sd := range def.Sections {
				if sd.ID != sec {
					continue
				}
				for _, r := range sd.Rows {
					row := make([]byte, r.Seats)
					for j := range row {
						row[j] = 'x'
						if m.Seats[k].Status == inventory.SeatAvailable {
							row[j] = inventory.SeatFree
						}
						k++
					}
					out[i] = append(out[i], row)
				}
			}
		}
		return out
	}
	for step := 0; step < 120; step++ {
		sec := []string{"P", "Q"}[rng.IntN(2)]
		if rng.IntN(3) == 0 {
			// Fragment: take one random seat (if free).
			r := def.Sections[map[string]int{"P": 0, "Q": 1}[sec]].Rows
			row := r[rng.IntN(len(r))]
			s.Hold(ctx, ev, seats("frag", inventory.SeatID(sec, row.ID, 1+rng.IntN(row.Seats))))
			continue
		}
		n := 1 + rng.IntN(5)
		req := best("u", sec, n)
		secs := []string{sec}
		if rng.IntN(2) == 0 {
			req.Best = &inventory.BestRequest{Tier: "t", Quantity: n}
			secs = []string{"P", "Q"}
		}
		rows := rowsOf(secs)
		want, ok := inventory.BestBlock(rows, n)
		h, err := s.Hold(ctx, ev, req)
		if !ok {
			if !errors.Is(err, inventory.ErrNotEnoughSeats) && !errors.Is(err, inventory.ErrSoldOut) {
				t.Fatalf("step %d: no block of %d exists but Hold = %+v, %v", step, n, h, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("step %d: Hold best %d: %v", step, n, err)
		}
		var wantSeats []string
		secDef := def.Sections[map[string]int{"P": 0, "Q": 1}[secs[want.Section]]]
		for i := range n {
			wantSeats = append(wantSeats, inventory.SeatID(secDef.ID, secDef.Rows[want.Row].ID, want.Start+i+1))
		}
		if !slices.Equal(h.Seats, wantSeats) {
			t.Fatalf("step %d: best %d in %v chose %v, reference says %v\nrows: %q", step, n, secs, h.Seats, wantSeats, rows)
		}
		if rng.IntN(2) == 0 {
			s.Release(ctx, ev, h.ID, inventory.ReleaseRequest{})
		}
	}
}

func testGA(t *testing.T, s inventory.Store) {
	ev := define(t, s, Theatre())
	h := hold(t, s, ev, ga("u1", "floor", 4))
	if h.Pool != "floor" || h.Quantity != 4 || len(h.Seats) != 0 || h.PriceCents != 36000 {
		t.Fatalf("GA hold = %+v", h)
	}
	hold(t, s, ev, ga("u2", "floor", 5))
	_, err := s.Hold(ctx, ev, ga("u3", "floor", 2))
	if d := wantErr(t, err, inventory.ErrNotEnoughSeats); d.Available != 1 {
		t.Fatalf("available = %d", d.Available)
	}
	last := hold(t, s, ev, ga("u3", "floor", 1))
	_, err = s.Hold(ctx, ev, ga("u4", "floor", 1))
	wantErr(t, err, inventory.ErrSoldOut)
	if _, err := s.Confirm(ctx, ev, last.ID, inventory.ConfirmRequest{PaymentRef: "p"}); err != nil {
		t.Fatal(err)
	}
	a := counts(t, s, ev)
	if a.GA["floor"] != (inventory.PoolCounts{Capacity: 10, Counts: inventory.Counts{Available: 0, Held: 9, Sold: 1}}) {
		t.Fatalf("floor = %+v", a.GA["floor"])
	}
	wantCounts(t, a.Counts, 47, 9, 1)
	if _, err := s.Release(ctx, ev, h.ID, inventory.ReleaseRequest{}); err != nil {
		t.Fatal(err)
	}
	if c := counts(t, s, ev).GA["floor"]; c.Available != 4 || c.Held != 5 {
		t.Fatalf("after release floor = %+v", c)
	}
}

func testUserLimit(t *testing.T, s inventory.Store) {
	def := Theatre()
	def.Limits.PerUser = 4
	ev := define(t, s, def)
	h1 := hold(t, s, ev, seats("u1", "A-1-1", "A-1-2", "A-1-3"))
	_, err := s.Hold(ctx, ev, seats("u1", "A-2-1", "A-2-2"))
	if d := wantErr(t, err, inventory.ErrUserLimit); d.Limit != 4 || d.Current != 3 {
		t.Fatalf("limit error = %+v", d)
	}
	_, err = s.Hold(ctx, ev, ga("u1", "floor", 2))
	wantErr(t, err, inventory.ErrUserLimit)
	hold(t, s, ev, seats("u2", "A-2-1", "A-2-2")) // other users unaffected
	h2 := hold(t, s, ev, ga("u1", "floor", 1))
	if _, err := s.Confirm(ctx, ev, h1.ID, inventory.ConfirmRequest{}); err != nil {
		t.Fatal(err)
	}
	_, err = s.Hold(ctx, ev, best("u1", "B", 1)) // 3 sold + 1 held = 4
	wantErr(t, err, inventory.ErrUserLimit)
	if _, err := s.Release(ctx, ev, h2.ID, inventory.ReleaseRequest{}); err != nil {
		t.Fatal(err)
	}
	hold(t, s, ev, best("u1", "B", 1))
	// Expired holds stop counting.
	req := seats("u3", "C-1-1", "C-1-2", "C-1-3", "C-1-4")
	req.TTL = expireSoon
	hold(t, s, ev, req)
	waitExpiry()
	hold(t, s, ev, ga("u3", "floor", 4))
}

func testConfirm(t *testing.T, s inventory.Store) {
	ev := define(t, s, Theatre())
	h := hold(t, s, ev, seats("u1", "A-1-1", "A-1-2"))
	o, err := s.Confirm(ctx, ev, h.ID, inventory.ConfirmRequest{PaymentRef: "pay_1"})
	if err != nil {
		t.Fatal(err)
	}
	if o.ID == "" || o.HoldID != h.ID || o.Status != inventory.OrderConfirmed || !slices.Equal(o.Seats, h.Seats) ||
		o.PaymentRef != "pay_1" || o.User != "u1" || o.PriceCents != 30000 {
		t.Fatalf("order = %+v", o)
	}
	again, err := s.Confirm(ctx, ev, h.ID, inventory.ConfirmRequest{PaymentRef: "pay_1"})
	if err != nil || again.ID != o.ID {
		t.Fatalf("second confirm = %+v, %v; want the same order %s", again, err, o.ID)
	}
	got, err := s.GetHold(ctx, ev, h.ID)
	if err != nil || got.Status != inventory.HoldConfirmed || got.OrderID != o.ID {
		t.Fatalf("hold after confirm = %+v, %v", got, err)
	}
	got2, err := s.GetOrder(ctx, ev, o.ID)
	if err != nil || got2.ID != o.ID || got2.Status != inventory.OrderConfirmed {
		t.Fatalf("GetOrder = %+v, %v", got2, err)
	}
	wantCounts(t, counts(t, s, ev).Sections["A"], 28, 0, 2)
	if st := seatStatus(t, s, ev, "A-1-1"); st != inventory.SeatSold {
		t.Fatalf("A-1-1 is %s", st)
	}
	_, err = s.Confirm(ctx, ev, "hld_nope", inventory.ConfirmRequest{})
	wantErr(t, err, inventory.ErrHoldNotFound)
	_, err = s.Hold(ctx, ev, seats("u2", "A-1-1"))
	wantErr(t, err, inventory.ErrSeatUnavailable)
}

func testConfirmExpired(t *testing.T, s inventory.Store) {
	ev := define(t, s, Theatre())
	req := seats("u1", "A-1-1")
	req.TTL = expireSoon
	h := hold(t, s, ev, req)
	waitExpiry()
	_, err := s.Confirm(ctx, ev, h.ID, inventory.ConfirmRequest{PaymentRef: "late"})
	wantErr(t, err, inventory.ErrHoldExpired)
	got, err := s.GetHold(ctx, ev, h.ID)
	if err != nil || got.Status != inventory.HoldExpired || got.OrderID != "" {
		t.Fatalf("hold = %+v, %v; want expired", got, err)
	}
	wantCounts(t, counts(t, s, ev).Counts, 57, 0, 0)
}

func testConfirmReleased(t *testing.T, s inventory.Store) {
	ev := define(t, s, Theatre())
	h := hold(t, s, ev, seats("u1", "A-1-1"))
	if _, err := s.Release(ctx, ev, h.ID, inventory.ReleaseRequest{}); err != nil {
		t.Fatal(err)
	}
	_, err := s.Confirm(ctx, ev, h.ID, inventory.ConfirmRequest{})
	wantErr(t, err, inventory.ErrHoldReleased)
	wantCounts(t, counts(t, s, ev).Counts, 57, 0, 0)
}

func testRelease(t *testing.T, s inventory.Store) {
	ev := define(t, s, Theatre())
	h := hold(t, s, ev, seats("u1", "A-1-1", "A-1-2"))
	r, err := s.Release(ctx, ev, h.ID, inventory.ReleaseRequest{})
	if err != nil || r.Status != "released" || r.HoldStatus != inventory.HoldReleased || r.HoldID != h.ID {
		t.Fatalf("release = %+v, %v", r, err)
	}
	r, err = s.Release(ctx, ev, h.ID, inventory.ReleaseRequest{})
	if err != nil || r.Status != "released" {
		t.Fatalf("second release = %+v, %v", r, err)
	}
	wantCounts(t, counts(t, s, ev).Counts, 57, 0, 0)
	hold(t, s, ev, seats("u2", "A-1-1")) // the seat is free again

	req := seats("u1", "B-1-1")
	req.TTL = expireSoon
	short := hold(t, s, ev, req)
	waitExpiry()
	r, err = s.Release(ctx, ev, short.ID, inventory.ReleaseRequest{})
	if err != nil || r.Status != "released" || r.HoldStatus != inventory.HoldExpired {
		t.Fatalf("release of expired = %+v, %v", r, err)
	}

	sold := hold(t, s, ev, seats("u1", "C-1-1"))
	if _, err := s.Confirm(ctx, ev, sold.ID, inventory.ConfirmRequest{}); err != nil {
		t.Fatal(err)
	}
	_, err = s.Release(ctx, ev, sold.ID, inventory.ReleaseRequest{})
	wantErr(t, err, inventory.ErrHoldConfirmed)
	_, err = s.Release(ctx, ev, "hld_nope", inventory.ReleaseRequest{})
	wantErr(t, err, inventory.ErrHoldNotFound)
}

func testCancel(t *testing.T, s inventory.Store) {
	def := Theatre()
	def.Limits.PerUser = 2
	ev := define(t, s, def)
	h := hold(t, s, ev, seats("u1", "A-1-1", "A-1-2"))
	o, err := s.Confirm(ctx, ev, h.ID, inventory.ConfirmRequest{})
	if err != nil {
		t.Fatal(err)
	}
	c, err := s.Cancel(ctx, ev, o.ID, inventory.CancelRequest{Reason: "refund"})
	if err != nil || c.Status != inventory.OrderCancelled || c.ID != o.ID || c.CancelledAt == nil {
		t.Fatalf("cancel = %+v, %v", c, err)
	}
	c, err = s.Cancel(ctx, ev, o.ID, inventory.CancelRequest{})
	if err != nil || c.Status != inventory.OrderCancelled {
		t.Fatalf("second cancel = %+v, %v", c, err)
	}
	wantCounts(t, counts(t, s, ev).Counts, 57, 0, 0)
	_, err = s.Confirm(ctx, ev, h.ID, inventory.ConfirmRequest{})
	wantErr(t, err, inventory.ErrOrderCancelled)
	hold(t, s, ev, seats("u1", "A-1-1", "A-1-2")) // seats and the user's limit are free again
	_, err = s.Cancel(ctx, ev, "ord_nope", inventory.CancelRequest{})
	wantErr(t, err, inventory.ErrOrderNotFound)

	g := hold(t, s, ev, ga("u2", "floor", 2))
	og, err := s.Confirm(ctx, ev, g.ID, inventory.ConfirmRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Cancel(ctx, ev, og.ID, inventory.CancelRequest{}); err != nil {
		t.Fatal(err)
	}
	if f := counts(t, s, ev).GA["floor"]; f.Available != 10 || f.Sold != 0 {
		t.Fatalf("floor after cancel = %+v", f)
	}
}

func testLazyExpiry(t *testing.T, s inventory.Store) {
	ev := define(t, s, Theatre())
	req := seats("u1", "A-1-1", "A-1-2")
	req.TTL = expireSoon
	first := hold(t, s, ev, req)
	gareq := ga("u1", "floor", 10)
	gareq.TTL = expireSoon
	hold(t, s, ev, gareq)
	waitExpiry()
	// No reaper has run: the seats are free to every operation.
	wantCounts(t, counts(t, s, ev).Counts, 57, 0, 0)
	if st := seatStatus(t, s, ev, "A-1-2"); st != inventory.SeatAvailable {
		t.Fatalf("expired seat shows %s", st)
	}
	second := hold(t, s, ev, seats("u2", "A-1-2", "A-1-3"))
	hold(t, s, ev, ga("u2", "floor", 10))
	got, err := s.GetHold(ctx, ev, first.ID)
	if err != nil || got.Status != inventory.HoldExpired {
		t.Fatalf("first hold = %+v, %v", got, err)
	}
	if second.Status != inventory.HoldHeld {
		t.Fatalf("second = %+v", second)
	}
}

func testReap(t *testing.T, s inventory.Store) {
	ev := define(t, s, Theatre())
	for i := 1; i <= 5; i++ {
		req := seats("u1", fmt.Sprintf("A-1-%d", i))
		req.TTL = expireSoon
		hold(t, s, ev, req)
	}
	long := hold(t, s, ev, seats("u2", "B-1-1"))
	waitExpiry()
	n, err := s.Reap(ctx, ev, 3)
	if err != nil || n != 3 {
		t.Fatalf("Reap(3) = %d, %v; want 3", n, err)
	}
	n, err = s.Reap(ctx, ev, 10)
	if err != nil || n > 2 {
		t.Fatalf("second Reap = %d, %v; want at most the 2 left", n, err)
	}
	n, err = s.Reap(ctx, ev, 10)
	if err != nil || n != 0 {
		t.Fatalf("third Reap = %d, %v; want 0", n, err)
	}
	if got, _ := s.GetHold(ctx, ev, long.ID); got.Status != inventory.HoldHeld {
		t.Fatalf("live hold reaped: %+v", got)
	}
	wantCounts(t, counts(t, s, ev).Counts, 56, 1, 0)
	expires := 0
	for _, e := range auditAll(t, s, ev) {
		if e.Action == inventory.ActionExpire {
			expires++
			if e.Actor != "system" || e.HoldID == "" || len(e.Seats) != 1 {
				t.Fatalf("expire entry = %+v", e)
			}
		}
	}
	if expires != 5 {
		t.Fatalf("%d expire entries, want 5", expires)
	}
}

func testIdempotentHold(t *testing.T, s inventory.Store) {
	ev := define(t, s, Theatre())
	req := seats("u1", "A-1-1")
	req.IdempotencyKey = "k-hold-1"
	h1 := hold(t, s, ev, req)
	h2 := hold(t, s, ev, req)
	if h2.ID != h1.ID || !h2.Replayed || h1.Replayed || !h2.ExpiresAt.Equal(h1.ExpiresAt) {
		t.Fatalf("retry = %+v, want replay of %+v", h2, h1)
	}
	wantCounts(t, counts(t, s, ev).Counts, 56, 1, 0)
	// The original result, even after the hold has moved on.
	if _, err := s.Release(ctx, ev, h1.ID, inventory.ReleaseRequest{}); err != nil {
		t.Fatal(err)
	}
	h3 := hold(t, s, ev, req)
	if h3.ID != h1.ID || h3.Status != inventory.HoldHeld {
		t.Fatalf("retry after release = %+v", h3)
	}
	wantCounts(t, counts(t, s, ev).Counts, 57, 0, 0)
	// Same key, different request.
	other := seats("u1", "A-1-2")
	other.IdempotencyKey = "k-hold-1"
	_, err := s.Hold(ctx, ev, other)
	wantErr(t, err, inventory.ErrIdempotencyMismatch)
	// A failure is an outcome too: the retry gets it back.
	hold(t, s, ev, seats("u2", "A-1-5"))
	conflict := seats("u3", "A-1-5")
	conflict.IdempotencyKey = "k-hold-2"
	_, err = s.Hold(ctx, ev, conflict)
	wantErr(t, err, inventory.ErrSeatUnavailable)
	_, err = s.Hold(ctx, ev, conflict)
	if d := wantErr(t, err, inventory.ErrSeatUnavailable); !slices.Equal(d.Seats, []string{"A-1-5"}) {
		t.Fatalf("replayed conflict = %+v", d)
	}
	// Keys belong to their event.
	ev2 := define(t, s, Theatre())
	h4 := hold(t, s, ev2, req)
	if h4.ID == h1.ID || h4.Replayed {
		t.Fatalf("key leaked across events: %+v", h4)
	}
}

func testIdempotentConfirmRelease(t *testing.T, s inventory.Store) {
	ev := define(t, s, Theatre())
	h := hold(t, s, ev, seats("u1", "A-1-1"))
	creq := inventory.ConfirmRequest{PaymentRef: "pay", IdempotencyKey: "k-confirm"}
	o1, err := s.Confirm(ctx, ev, h.ID, creq)
	if err != nil {
		t.Fatal(err)
	}
	o2, err := s.Confirm(ctx, ev, h.ID, creq)
	if err != nil || o2.ID != o1.ID || !o2.Replayed {
		t.Fatalf("confirm retry = %+v, %v", o2, err)
	}
	_, err = s.Confirm(ctx, ev, h.ID, inventory.ConfirmRequest{PaymentRef: "other", IdempotencyKey: "k-confirm"})
	wantErr(t, err, inventory.ErrIdempotencyMismatch)

	h2 := hold(t, s, ev, seats("u1", "A-1-2"))
	rreq := inventory.ReleaseRequest{IdempotencyKey: "k-release"}
	r1, err := s.Release(ctx, ev, h2.ID, rreq)
	if err != nil || r1.HoldStatus != inventory.HoldReleased {
		t.Fatal(r1, err)
	}
	r2, err := s.Release(ctx, ev, h2.ID, rreq)
	if err != nil || !r2.Replayed || r2.HoldID != h2.ID {
		t.Fatalf("release retry = %+v, %v", r2, err)
	}
	// A remembered failure of confirm.
	h3 := hold(t, s, ev, seats("u1", "A-1-3"))
	if _, err := s.Release(ctx, ev, h3.ID, inventory.ReleaseRequest{}); err != nil {
		t.Fatal(err)
	}
	late := inventory.ConfirmRequest{IdempotencyKey: "k-late"}
	_, err = s.Confirm(ctx, ev, h3.ID, late)
	wantErr(t, err, inventory.ErrHoldReleased)
	_, err = s.Confirm(ctx, ev, h3.ID, late)
	wantErr(t, err, inventory.ErrHoldReleased)
}

func testUpdateEvent(t *testing.T, s inventory.Store) {
	ev := define(t, s, Theatre())
	h := hold(t, s, ev, seats("u1", "A-3-10"))
	g := hold(t, s, ev, ga("u1", "floor", 6))

	smaller := Theatre()
	smaller.Sections[0].Rows = smaller.Sections[0].Rows[:2] // drops row 3
	_, err := s.PutEvent(ctx, ev, smaller, "")
	if d := wantErr(t, err, inventory.ErrDefinitionConflict); !slices.Equal(d.Seats, []string{"A-3-10"}) {
		t.Fatalf("conflict = %+v", d)
	}
	shrunk := Theatre()
	shrunk.Sections[0].Rows[2].Seats = 9
	_, err = s.PutEvent(ctx, ev, shrunk, "")
	wantErr(t, err, inventory.ErrDefinitionConflict)
	lessGA := Theatre()
	lessGA.GA[0].Capacity = 5
	_, err = s.PutEvent(ctx, ev, lessGA, "")
	if d := wantErr(t, err, inventory.ErrDefinitionConflict); !slices.Equal(d.Pools, []string{"floor"}) {
		t.Fatalf("pool conflict = %+v", d)
	}
	if got, _ := s.Event(ctx, ev); got.Seats != 47 {
		t.Fatalf("a refused update changed the event: %+v", got)
	}
	// Growing keeps held seats; an available seat may be removed.
	grown := Theatre()
	grown.Sections[0].Rows = append(grown.Sections[0].Rows, inventory.Row{ID: "4", Seats: 12})
	grown.Sections[2].Rows[0].Seats = 4
	grown.Sections[1].Tier = "platinum"
	grown.GA[0].Capacity = 6
	if _, err := s.PutEvent(ctx, ev, grown, ""); err != nil {
		t.Fatal(err)
	}
	a := counts(t, s, ev)
	wantCounts(t, a.Sections["A"], 41, 1, 0)
	wantCounts(t, a.Sections["C"], 4, 0, 0)
	if a.GA["floor"].Capacity != 6 || a.GA["floor"].Available != 0 {
		t.Fatalf("floor = %+v", a.GA["floor"])
	}
	if _, err := s.Confirm(ctx, ev, h.ID, inventory.ConfirmRequest{}); err != nil {
		t.Fatalf("confirming a hold across an update: %v", err)
	}
	hold(t, s, ev, inventory.HoldRequest{User: "u2", Best: &inventory.BestRequest{Tier: "platinum", Quantity: 2}})
	// Back to the original: row 4 is free, C-1-5 returns, the floor's 6
	// held places fit in 10 again.
	if _, err := s.PutEvent(ctx, ev, Theatre(), ""); err != nil {
		t.Fatal(err)
	}
	a = counts(t, s, ev)
	wantCounts(t, a.Sections["A"], 29, 0, 1)
	wantCounts(t, a.Sections["B"], 10, 2, 0)
	wantCounts(t, a.Sections["C"], 5, 0, 0)
	if got, err := s.GetHold(ctx, ev, g.ID); err != nil || got.Status != inventory.HoldHeld || a.GA["floor"].Held != 6 {
		t.Fatalf("GA hold across updates = %+v, %v, %+v", got, err, a.GA["floor"])
	}
}

func auditAll(t *testing.T, s inventory.Store, ev string) []inventory.AuditEntry {
	t.Helper()
	var all []inventory.AuditEntry
	after := ""
	for {
		p, err := s.Audit(ctx, ev, after, 2)
		if err != nil {
			t.Fatalf("Audit: %v", err)
		}
		all = append(all, p.Entries...)
		if len(p.Entries) == 0 {
			return all
		}
		after = p.Next
	}
}

func testAudit(t *testing.T, s inventory.Store) {
	ev := define(t, s, Theatre())
	h := hold(t, s, ev, inventory.HoldRequest{User: "u1", Seats: []string{"A-1-1"}, Actor: "checkout"})
	o, err := s.Confirm(ctx, ev, h.ID, inventory.ConfirmRequest{Actor: "checkout"})
	if err != nil {
		t.Fatal(err)
	}
	h2 := hold(t, s, ev, ga("u2", "floor", 2))
	if _, err := s.Release(ctx, ev, h2.ID, inventory.ReleaseRequest{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Cancel(ctx, ev, o.ID, inventory.CancelRequest{Actor: "support"}); err != nil {
		t.Fatal(err)
	}
	// Failed and read-only calls leave no trace.
	s.Hold(ctx, ev, seats("u3", "Z-1-1"))
	s.Availability(ctx, ev)

	all := auditAll(t, s, ev)
	var actions []string
	for _, e := range all {
		actions = append(actions, e.Action)
	}
	want := []string{"define", "hold", "confirm", "hold", "release", "cancel"}
	if !slices.Equal(actions, want) {
		t.Fatalf("actions = %v, want %v", actions, want)
	}
	if e := all[1]; e.User != "u1" || e.Actor != "checkout" || e.HoldID != h.ID || !slices.Equal(e.Seats, []string{"A-1-1"}) || e.At.IsZero() {
		t.Fatalf("hold entry = %+v", e)
	}
	if e := all[2]; e.OrderID != o.ID || e.HoldID != h.ID {
		t.Fatalf("confirm entry = %+v", e)
	}
	if e := all[3]; e.Pool != "floor" || e.Quantity != 2 {
		t.Fatalf("GA hold entry = %+v", e)
	}
	if e := all[5]; e.Actor != "support" || e.OrderID != o.ID {
		t.Fatalf("cancel entry = %+v", e)
	}
	for i := 1; i < len(all); i++ {
		if all[i].At.Before(all[i-1].At) {
			t.Fatalf("entries out of time order: %+v before %+v", all[i-1], all[i])
		}
	}
	// Reading after any entry's id returns exactly what follows it.
	for i, e := range all {
		p, err := s.Audit(ctx, ev, e.ID, 100)
		if err != nil || len(p.Entries) != len(all)-i-1 {
			t.Fatalf("after %s: %d entries, %v; want %d", e.ID, len(p.Entries), err, len(all)-i-1)
		}
	}
	p, err := s.Audit(ctx, ev, all[len(all)-1].ID, 10)
	if err != nil || len(p.Entries) != 0 || p.Next == "" {
		t.Fatalf("at the end: %+v, %v", p, err)
	}
	_, err = s.Audit(ctx, ev, "not-a-cursor", 10)
	wantErr(t, err, inventory.ErrInvalid)
}

func testSeatMap(t *testing.T, s inventory.Store) {
	ev := define(t, s, Theatre())
	h := hold(t, s, ev, seats("u1", "B-2-6"))
	if _, err := s.Confirm(ctx, ev, h.ID, inventory.ConfirmRequest{}); err != nil {
		t.Fatal(err)
	}
	hold(t, s, ev, seats("u1", "B-1-1"))
	m, err := s.SeatMap(ctx, ev, "B")
	if err != nil {
		t.Fatal(err)
	}
	if m.Section != "B" || len(m.Seats) != 12 || m.Seats[0] != (inventory.SeatState{ID: "B-1-1", Status: inventory.SeatHeld}) ||
		m.Seats[11] != (inventory.SeatState{ID: "B-2-6", Status: inventory.SeatSold}) ||
		m.Seats[6] != (inventory.SeatState{ID: "B-2-1", Status: inventory.SeatAvailable}) {
		t.Fatalf("seat map = %+v", m)
	}
	_, err = s.SeatMap(ctx, ev, "Q")
	wantErr(t, err, inventory.ErrSectionNotFound)
}

// testHotSeats has many clients fight over a few seats and checks that no
// seat was ever held or sold twice.
func testHotSeats(t *testing.T, s inventory.Store) {
	ev := define(t, s, inventory.EventDef{Sections: []inventory.Section{{ID: "H", Rows: []inventory.Row{{ID: "1", Seats: 6}}}}})
	const clients, tries = 24, 15
	var mu sync.Mutex
	owner := map[string]string{} // seat → order
	var wg sync.WaitGroup
	for c := range clients {
		wg.Go(func() {
			user := fmt.Sprintf("u%d", c)
			for i := range tries {
				var req inventory.HoldRequest
				switch i % 3 {
				case 0:
					req = seats(user, fmt.Sprintf("H-1-%d", i%6+1), fmt.Sprintf("H-1-%d", (i+1)%6+1))
				case 1:
					req = best(user, "H", 1+i%2)
				default:
					req = seats(user, fmt.Sprintf("H-1-%d", c%6+1))
				}
				h, err := s.Hold(ctx, ev, req)
				if err != nil {
					if !errors.Is(err, inventory.ErrSeatUnavailable) && !errors.Is(err, inventory.ErrSoldOut) && !errors.Is(err, inventory.ErrNotEnoughSeats) {
						t.Errorf("hold: %v", err)
					}
					continue
				}
				if (c+i)%2 == 0 {
					s.Release(ctx, ev, h.ID, inventory.ReleaseRequest{})
					continue
				}
				o, err := s.Confirm(ctx, ev, h.ID, inventory.ConfirmRequest{})
				if err != nil {
					t.Errorf("confirm of a live hold: %v", err)
					continue
				}
				mu.Lock()
				for _, seat := range o.Seats {
					if prev, ok := owner[seat]; ok {
						t.Errorf("seat %s sold twice: %s and %s", seat, prev, o.ID)
					}
					owner[seat] = o.ID
				}
				mu.Unlock()
				if c%5 == 0 {
					if _, err := s.Cancel(ctx, ev, o.ID, inventory.CancelRequest{}); err != nil {
						t.Errorf("cancel: %v", err)
					}
					mu.Lock()
					for _, seat := range o.Seats {
						delete(owner, seat)
					}
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	a := counts(t, s, ev)
	if a.Sold != len(owner) || a.Held != 0 || a.Available != 6-len(owner) {
		t.Fatalf("counts %+v disagree with %d sold seats", a.Counts, len(owner))
	}
	m, _ := s.SeatMap(ctx, ev, "H")
	for _, st := range m.Seats {
		_, sold := owner[st.ID]
		if sold != (st.Status == inventory.SeatSold) {
			t.Fatalf("seat %s is %s, sold to %q", st.ID, st.Status, owner[st.ID])
		}
	}
}

func testPersistence(t *testing.T, h Harness) {
	s := h.New(t)
	def := Theatre()
	def.Limits.PerUser = 5
	ev := define(t, s, def)
	held := hold(t, s, ev, seats("u1", "A-1-1", "A-1-2"))
	toSell := hold(t, s, ev, seats("u2", "B-1-1"))
	o, err := s.Confirm(ctx, ev, toSell.ID, inventory.ConfirmRequest{PaymentRef: "p1"})
	if err != nil {
		t.Fatal(err)
	}
	released := hold(t, s, ev, ga("u3", "floor", 3))
	s.Release(ctx, ev, released.ID, inventory.ReleaseRequest{})
	cancelled := hold(t, s, ev, seats("u4", "C-1-1"))
	oc, _ := s.Confirm(ctx, ev, cancelled.ID, inventory.ConfirmRequest{})
	s.Cancel(ctx, ev, oc.ID, inventory.CancelRequest{})
	keyed := ga("u5", "floor", 2)
	keyed.IdempotencyKey = "persist-key"
	k1 := hold(t, s, ev, keyed)
	before := counts(t, s, ev)
	auditBefore := auditAll(t, s, ev)

	s = h.Reopen(t, s)
	if a := counts(t, s, ev); fmt.Sprint(a) != fmt.Sprint(before) {
		t.Fatalf("availability after reopen = %+v, want %+v", a, before)
	}
	if got, err := s.GetHold(ctx, ev, held.ID); err != nil || got.Status != inventory.HoldHeld || !got.ExpiresAt.Equal(held.ExpiresAt) {
		t.Fatalf("held after reopen = %+v, %v", got, err)
	}
	if got, err := s.GetOrder(ctx, ev, o.ID); err != nil || got.Status != inventory.OrderConfirmed || !slices.Equal(got.Seats, []string{"B-1-1"}) {
		t.Fatalf("order after reopen = %+v, %v", got, err)
	}
	if got, err := s.GetHold(ctx, ev, released.ID); err != nil || got.Status != inventory.HoldReleased {
		t.Fatalf("released after reopen = %+v, %v", got, err)
	}
	if got, err := s.GetOrder(ctx, ev, oc.ID); err != nil || got.Status != inventory.OrderCancelled {
		t.Fatalf("cancelled after reopen = %+v, %v", got, err)
	}
	if again := hold(t, s, ev, keyed); again.ID != k1.ID || !again.Replayed {
		t.Fatalf("idempotency key lost: %+v", again)
	}
	if a := auditAll(t, s, ev); len(a) != len(auditBefore) || a[len(a)-1].ID != auditBefore[len(auditBefore)-1].ID {
		t.Fatalf("audit after reopen has %d entries, want %d", len(a), len(auditBefore))
	}
	// The user limit still counts what u1 holds.
	_, err = s.Hold(ctx, ev, seats("u1", "A-2-1", "A-2-2", "A-2-3", "A-2-4"))
	wantErr(t, err, inventory.ErrUserLimit)
	// And the store keeps working.
	if _, err := s.Confirm(ctx, ev, held.ID, inventory.ConfirmRequest{}); err != nil {
		t.Fatal(err)
	}
}

func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)) }
