package inventorytest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/waitroom/waitroom/inventory"
)

// toyStore is a minimal single-event store for the linearizability
// model's own tests. Correct by default; its flags plant the bugs the
// checker must catch.
type toyStore struct {
	inventory.Store // unused methods panic (nil)

	// racyHold checks availability, lets go of the lock, then writes:
	// the classic read-then-write double booking.
	racyHold bool
	// confirmExpired forgets that a hold past its expiry is gone.
	confirmExpired bool
	// extendUnbounded ignores the maximum hold time.
	extendUnbounded bool

	mu     sync.Mutex
	holds  map[string]*toyHold
	orders map[string]*inventory.Order
}

type toyHold struct {
	inventory.Hold
	ga bool
}

func newToy() *toyStore {
	return &toyStore{holds: map[string]*toyHold{}, orders: map[string]*inventory.Order{}}
}

// PutEvent starts the toy's one event afresh (each recorded history
// defines a new event).
func (s *toyStore) PutEvent(context.Context, string, inventory.EventDef, string) (inventory.Event, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.holds, s.orders = map[string]*toyHold{}, map[string]*inventory.Order{}
	return inventory.Event{}, nil
}

func (s *toyStore) live(h *toyHold, now int64) bool {
	return h.Status == inventory.HoldHeld && h.ExpiresAt.UnixMilli() > now
}

// usage returns taken seats, used GA places and the user's count.
func (s *toyStore) usage(now int64, user string) (map[string]bool, int, int) {
	taken, ga, mine := map[string]bool{}, 0, 0
	for _, h := range s.holds {
		sold := h.Status == inventory.HoldConfirmed && s.orders[h.OrderID].Status == inventory.OrderConfirmed
		if !s.live(h, now) && !sold {
			continue
		}
		if h.User == user {
			mine += h.Quantity
		}
		if h.ga {
			ga += h.Quantity
		}
		for _, seat := range h.Seats {
			taken[seat] = true
		}
	}
	return taken, ga, mine
}

func (s *toyStore) Hold(_ context.Context, ev string, req inventory.HoldRequest) (inventory.Hold, error) {
	s.mu.Lock()
	now := time.Now().UnixMilli()
	taken, ga, mine := s.usage(now, req.User)
	qty := len(req.Seats)
	if req.GA != nil {
		qty = req.GA.Quantity
	}
	if mine+qty > linLimit {
		s.mu.Unlock()
		return inventory.Hold{}, &inventory.Error{Kind: inventory.ErrUserLimit}
	}
	if req.GA != nil {
		if free := linPoolCap - ga; free < qty {
			s.mu.Unlock()
			if free == 0 {
				return inventory.Hold{}, &inventory.Error{Kind: inventory.ErrSoldOut}
			}
			return inventory.Hold{}, &inventory.Error{Kind: inventory.ErrNotEnoughSeats}
		}
	} else {
		var bad []string
		for _, seat := range req.Seats {
			if taken[seat] {
				bad = append(bad, seat)
			}
		}
		if len(bad) > 0 {
			s.mu.Unlock()
			return inventory.Hold{}, &inventory.Error{Kind: inventory.ErrSeatUnavailable, Seats: bad}
		}
	}
	if s.racyHold {
		s.mu.Unlock()
		time.Sleep(2 * time.Millisecond)
		s.mu.Lock()
		now = time.Now().UnixMilli()
	}
	defer s.mu.Unlock()
	h := &toyHold{ga: req.GA != nil, Hold: inventory.Hold{ID: inventory.NewID("hld"), Event: ev, User: req.User,
		Seats: req.Seats, Quantity: qty, Status: inventory.HoldHeld,
		CreatedAt: inventory.UnixMilli(now), ExpiresAt: inventory.UnixMilli(now + req.TTL.Milliseconds())}}
	s.holds[h.ID] = h
	return h.Hold, nil
}

func (s *toyStore) Confirm(_ context.Context, ev, id string, _ inventory.ConfirmRequest) (inventory.Order, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now().UnixMilli()
	h := s.holds[id]
	switch {
	case h == nil:
		return inventory.Order{}, inventory.ErrHoldNotFound
	case h.Status == inventory.HoldConfirmed:
		if o := s.orders[h.OrderID]; o.Status == inventory.OrderCancelled {
			return inventory.Order{}, inventory.ErrOrderCancelled
		}
		return *s.orders[h.OrderID], nil
	case h.Status == inventory.HoldReleased:
		return inventory.Order{}, inventory.ErrHoldReleased
	case !s.live(h, now) && !s.confirmExpired:
		return inventory.Order{}, inventory.ErrHoldExpired
	}
	o := &inventory.Order{ID: inventory.NewID("ord"), HoldID: id, Status: inventory.OrderConfirmed, ConfirmedAt: inventory.UnixMilli(now)}
	h.Status, h.OrderID = inventory.HoldConfirmed, o.ID
	s.orders[o.ID] = o
	return *o, nil
}

func (s *toyStore) Release(_ context.Context, ev, id string, _ inventory.ReleaseRequest) (inventory.Release, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	h := s.holds[id]
	switch {
	case h == nil:
		return inventory.Release{}, inventory.ErrHoldNotFound
	case h.Status == inventory.HoldConfirmed:
		return inventory.Release{}, inventory.ErrHoldConfirmed
	case h.Status == inventory.HoldReleased:
		return inventory.Release{HoldStatus: inventory.HoldReleased}, nil
	case !s.live(h, time.Now().UnixMilli()):
		return inventory.Release{HoldStatus: inventory.HoldExpired}, nil
	}
	h.Status = inventory.HoldReleased
	return inventory.Release{HoldStatus: inventory.HoldReleased}, nil
}

func (s *toyStore) Extend(_ context.Context, ev, id string, req inventory.ExtendRequest) (inventory.Hold, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now().UnixMilli()
	h := s.holds[id]
	switch {
	case h == nil:
		return inventory.Hold{}, inventory.ErrHoldNotFound
	case h.Status == inventory.HoldConfirmed:
		return inventory.Hold{}, inventory.ErrHoldConfirmed
	case h.Status == inventory.HoldReleased:
		return inventory.Hold{}, inventory.ErrHoldReleased
	case !s.live(h, now):
		return inventory.Hold{}, inventory.ErrHoldExpired
	}
	exp := now + req.TTL.Milliseconds()
	if !s.extendUnbounded {
		exp = min(exp, h.CreatedAt.UnixMilli()+linMaxHold)
	}
	if exp > h.ExpiresAt.UnixMilli() {
		h.ExpiresAt = inventory.UnixMilli(exp)
	}
	return h.Hold, nil
}

func (s *toyStore) Cancel(_ context.Context, ev, id string, _ inventory.CancelRequest) (inventory.Order, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o := s.orders[id]
	if o == nil {
		return inventory.Order{}, inventory.ErrOrderNotFound
	}
	if o.Status == inventory.OrderConfirmed {
		t := inventory.UnixMilli(time.Now().UnixMilli())
		o.Status, o.CancelledAt = inventory.OrderCancelled, &t
	}
	return *o, nil
}

func (s *toyStore) GetHold(_ context.Context, ev, id string) (inventory.Hold, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	h := s.holds[id]
	if h == nil {
		return inventory.Hold{}, inventory.ErrHoldNotFound
	}
	out := h.Hold
	if h.Status == inventory.HoldHeld && !s.live(h, time.Now().UnixMilli()) {
		out.Status = inventory.HoldExpired
	}
	return out, nil
}

func (s *toyStore) Availability(_ context.Context, ev string) (inventory.Availability, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now().UnixMilli()
	var sec, pool inventory.Counts
	for _, h := range s.holds {
		sold := h.Status == inventory.HoldConfirmed && s.orders[h.OrderID].Status == inventory.OrderConfirmed
		held := s.live(h, now)
		c := &sec
		n := len(h.Seats)
		if h.ga {
			c, n = &pool, h.Quantity
		}
		if sold {
			c.Sold += n
		} else if held {
			c.Held += n
		}
	}
	sec.Available = len(linSeats) - sec.Held - sec.Sold
	pool.Available = linPoolCap - pool.Held - pool.Sold
	return inventory.Availability{Sections: map[string]inventory.Counts{"H": sec},
		GA: map[string]inventory.PoolCounts{"G": {Capacity: linPoolCap, Counts: pool}}}, nil
}

func TestCheckerAcceptsCorrectToy(t *testing.T) {
	CheckLinearizable(t, newToy(), LinearizabilityOptions{Seed: 1})
}

// TestCheckerCatchesRacyHolds is the proof that the check can fail: a
// store that checks and then writes in two steps books seats twice, and
// porcupine must say so.
func TestCheckerCatchesRacyHolds(t *testing.T) {
	for run := range 5 {
		s := newToy()
		s.racyHold = true
		ops := RecordHistory(t, s, LinearizabilityOptions{Clients: 8, OpsPerClient: 30, Seed: uint64(run)})
		if Linearizable(ops) == porcupine.Illegal {
			return
		}
	}
	t.Fatal("five histories of a read-then-write store passed the linearizability check")
}

func TestCheckerCatchesConfirmAfterExpiry(t *testing.T) {
	for run := range 5 {
		s := newToy()
		s.confirmExpired = true
		ops := RecordHistory(t, s, LinearizabilityOptions{Seed: uint64(run) + 10})
		if Linearizable(ops) == porcupine.Illegal {
			return
		}
	}
	t.Fatal("five histories of a store that confirms expired holds passed the check")
}

func TestCheckerCatchesUnboundedExtend(t *testing.T) {
	for run := range 5 {
		s := newToy()
		s.extendUnbounded = true
		ops := RecordHistory(t, s, LinearizabilityOptions{Seed: uint64(run) + 20})
		if Linearizable(ops) == porcupine.Illegal {
			return
		}
	}
	t.Fatal("five histories of a store that extends holds past their maximum passed the check")
}

// TestModelExtend checks the model on hand-written histories: an extend
// keeps a seat held past its first expiry, within the maximum only.
func TestModelExtend(t *testing.T) {
	op := func(client int, in linInput, out linOutput, call, ret int64) porcupine.Operation {
		in.Call, in.Ret = call, ret
		return porcupine.Operation{ClientId: client, Call: call, Return: ret, Input: in, Output: out}
	}
	hold := op(0, linInput{Kind: linHold, User: "u1", Seats: []string{"H-1-1"}, TTL: 40}, linOutput{Hold: "a", At: 101, Exp: 141}, 100, 110)
	extend := op(0, linInput{Kind: linExtend, Hold: "a", TTL: 500}, linOutput{Exp: 621, Status: "held"}, 120, 130)
	taken := op(1, linInput{Kind: linHold, User: "u2", Seats: []string{"H-1-1"}, TTL: 40},
		linOutput{Code: "seat_unavailable", Seats: []string{"H-1-1"}}, 300, 310)
	if got := Linearizable([]porcupine.Operation{hold, extend, taken}); got != porcupine.Ok {
		t.Fatalf("a seat still held after an extend: %v, want Ok", got)
	}
	stolen := op(1, linInput{Kind: linHold, User: "u2", Seats: []string{"H-1-1"}, TTL: 40}, linOutput{Hold: "b", At: 301, Exp: 341}, 300, 310)
	if got := Linearizable([]porcupine.Operation{hold, extend, stolen}); got != porcupine.Illegal {
		t.Fatalf("a seat held twice after an extend: %v, want Illegal", got)
	}
	beyond := op(0, linInput{Kind: linExtend, Hold: "a", TTL: 60_000}, linOutput{Exp: 60_121, Status: "held"}, 120, 130)
	if got := Linearizable([]porcupine.Operation{hold, beyond}); got != porcupine.Illegal {
		t.Fatalf("an extend past the maximum hold: %v, want Illegal", got)
	}
	capped := op(0, linInput{Kind: linExtend, Hold: "a", TTL: 60_000}, linOutput{Exp: 101 + linMaxHold, Status: "held"}, 120, 130)
	late := op(0, linInput{Kind: linExtend, Hold: "a", TTL: 500}, linOutput{Code: "hold_expired"}, 200, 210)
	if got := Linearizable([]porcupine.Operation{hold, capped}); got != porcupine.Ok {
		t.Fatalf("an extend up to the maximum: %v, want Ok", got)
	}
	if got := Linearizable([]porcupine.Operation{hold, late}); got != porcupine.Ok {
		t.Fatalf("an extend after the expiry: %v, want Ok", got)
	}
}

// TestModelRejectsDoubleHold checks the model on a hand-written history:
// two clients both told they hold H-1-1 at overlapping times.
func TestModelRejectsDoubleHold(t *testing.T) {
	hold := func(client int, id string, call, ret int64) porcupine.Operation {
		return porcupine.Operation{ClientId: client, Call: call, Return: ret,
			Input:  linInput{Kind: linHold, User: "u" + id, Seats: []string{"H-1-1"}, TTL: 1000, Call: call, Ret: ret},
			Output: linOutput{Hold: id, At: call + 1, Exp: call + 1 + 1000}}
	}
	ops := []porcupine.Operation{hold(0, "a", 100, 110), hold(1, "b", 105, 115)}
	if got := Linearizable(ops); got != porcupine.Illegal {
		t.Fatalf("two overlapping holds of one seat: %v, want Illegal", got)
	}
	// The same two holds, the first long expired before the second: fine.
	ops[1] = hold(1, "b", 1200, 1210)
	if got := Linearizable(ops); got != porcupine.Ok {
		t.Fatalf("a hold after the first expired: %v, want Ok", got)
	}
}
