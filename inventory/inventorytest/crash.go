package inventorytest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/waitroom/waitroom/inventory"
)

// Crash tests load a store, kill it (or its Redis) with SIGKILL at a
// random moment, bring it back, and check two things: every acknowledged
// confirm and cancel is still there as acknowledged, and the audit stream
// replays to a history in which no seat was ever held by two live holds
// or sold twice, ending in exactly the store's current seat map.

// CrashEvent is the plan crash tests load: 2 sections of 4 rows of 10.
func CrashEvent() inventory.EventDef {
	rows := []inventory.Row{{ID: "1", Seats: 10}, {ID: "2", Seats: 10}, {ID: "3", Seats: 10}, {ID: "4", Seats: 10}}
	return inventory.EventDef{Sections: []inventory.Section{{ID: "A", Rows: rows}, {ID: "B", Rows: rows}},
		GA: []inventory.Pool{{ID: "floor", Capacity: 50}}}
}

// Ack is an acknowledged change (a confirm or a cancel), or the intent to
// cancel, reported before the call: a cancel in flight when the process
// dies may or may not have happened, and both are correct.
type Ack struct {
	Cancel bool
	Intent bool
	Order  string
	Hold   string
	Seats  []string
}

// String encodes an ack as one line (for a child process to report).
func (a Ack) String() string {
	kind := "confirm"
	switch {
	case a.Intent:
		kind = "cancel?"
	case a.Cancel:
		kind = "cancel"
	}
	return fmt.Sprintf("%s %s %s %s", kind, a.Order, a.Hold, strings.Join(a.Seats, ","))
}

// ParseAck decodes Ack.String.
func ParseAck(line string) (Ack, bool) {
	f := strings.Fields(line)
	if len(f) < 3 || (f[0] != "confirm" && f[0] != "cancel" && f[0] != "cancel?") {
		return Ack{}, false
	}
	a := Ack{Cancel: f[0] != "confirm", Intent: f[0] == "cancel?", Order: f[1], Hold: f[2], Seats: []string{}}
	if len(f) > 3 {
		a.Seats = strings.Split(f[3], ",")
	}
	return a, true
}

// Load runs worker goroutines that hold, confirm, release and cancel on ev
// until ctx ends or the store fails, reporting every acknowledged confirm
// and cancel to ack. It returns when all workers have stopped.
func Load(ctx context.Context, s inventory.Store, ev string, workers int, seed uint64, ack func(Ack)) {
	done := make(chan struct{})
	for w := range workers {
		go func() {
			defer func() { done <- struct{}{} }()
			rng := rand.New(rand.NewPCG(seed, uint64(w)))
			user := fmt.Sprintf("crash-%d-%d", seed, w)
			var mine []inventory.Order
			for ctx.Err() == nil {
				// Cancel now and then, so a sold-out event keeps moving.
				if len(mine) > 0 && rng.IntN(3) == 0 {
					i := rng.IntN(len(mine))
					o := mine[i]
					ack(Ack{Cancel: true, Intent: true, Order: o.ID, Hold: o.HoldID, Seats: o.Seats})
					c, err := s.Cancel(ctx, ev, o.ID, inventory.CancelRequest{Reason: "crash test"})
					if failed(err) {
						return
					}
					if err == nil && c.Status == inventory.OrderCancelled {
						ack(Ack{Cancel: true, Order: o.ID, Hold: o.HoldID, Seats: o.Seats})
						mine = slices.Delete(mine, i, i+1)
					}
				}
				var req inventory.HoldRequest
				switch rng.IntN(4) {
				case 0:
					req = inventory.HoldRequest{User: user, GA: &inventory.GARequest{Pool: "floor", Quantity: 1 + rng.IntN(3)}}
				case 1:
					sec := []string{"A", "B"}[rng.IntN(2)]
					req = inventory.HoldRequest{User: user, Best: &inventory.BestRequest{Section: sec, Quantity: 1 + rng.IntN(4)}}
				default:
					sec := []string{"A", "B"}[rng.IntN(2)]
					row := 1 + rng.IntN(4)
					n := 1 + rng.IntN(10)
					req = inventory.HoldRequest{User: user, Seats: []string{inventory.SeatID(sec, fmt.Sprint(row), n)}}
					if n < 10 && rng.IntN(2) == 0 {
						req.Seats = append(req.Seats, inventory.SeatID(sec, fmt.Sprint(row), n+1))
					}
				}
				if rng.IntN(5) == 0 {
					req.TTL = time.Duration(5+rng.IntN(20)) * time.Millisecond
				}
				h, err := s.Hold(ctx, ev, req)
				if failed(err) {
					return
				}
				if err != nil {
					continue
				}
				if rng.IntN(4) == 0 {
					if _, err := s.Release(ctx, ev, h.ID, inventory.ReleaseRequest{}); failed(err) {
						return
					}
					continue
				}
				o, err := s.Confirm(ctx, ev, h.ID, inventory.ConfirmRequest{PaymentRef: "pay-" + h.ID})
				if failed(err) {
					return
				}
				if err == nil {
					ack(Ack{Order: o.ID, Hold: h.ID, Seats: o.Seats})
					mine = append(mine, o)
				}
			}
		}()
	}
	for range workers {
		<-done
	}
}

// failed reports an error that means the store (or its connection) is gone.
func failed(err error) bool {
	return err != nil && (inventory.Code(err) == "" || errors.Is(err, inventory.ErrUnavailable))
}

// VerifyAcked checks that every acknowledged confirm is still sold to the
// same order with the same seats (unless an acknowledged cancel followed),
// and every acknowledged cancel is still cancelled.
func VerifyAcked(t *testing.T, s inventory.Store, ev string, acks []Ack) {
	t.Helper()
	ctx := context.Background()
	cancelled, maybe := map[string]bool{}, map[string]bool{}
	for _, a := range acks {
		switch {
		case a.Intent:
			maybe[a.Order] = true
		case a.Cancel:
			cancelled[a.Order] = true
		}
	}
	for _, a := range acks {
		if a.Intent {
			continue
		}
		o, err := s.GetOrder(ctx, ev, a.Order)
		if err != nil {
			t.Fatalf("acknowledged order %s lost: %v", a.Order, err)
		}
		if o.HoldID != a.Hold || !slices.Equal(o.Seats, a.Seats) {
			t.Fatalf("order %s changed: %+v, acknowledged as hold %s seats %v", a.Order, o, a.Hold, a.Seats)
		}
		want := inventory.OrderConfirmed
		if cancelled[a.Order] {
			want = inventory.OrderCancelled
		}
		if o.Status != want && !(maybe[a.Order] && !cancelled[a.Order]) {
			t.Fatalf("order %s is %s, acknowledged as %s", a.Order, o.Status, want)
		}
		if want == inventory.OrderConfirmed {
			h, err := s.GetHold(ctx, ev, a.Hold)
			if err != nil || h.Status != inventory.HoldConfirmed || h.OrderID != a.Order {
				t.Fatalf("hold %s of order %s = %+v, %v", a.Hold, a.Order, h, err)
			}
		}
	}
}

// CheckAuditInvariants replays the audit stream of ev and fails t if any
// seat was ever held by two live holds or sold to two orders at once, or
// if the replayed end state differs from the store's seat map and
// availability. It returns how many entries it replayed. Call it when no
// load runs and no short hold is pending (the reads must not expire holds
// between the audit and the seat map).
func CheckAuditInvariants(t *testing.T, s inventory.Store, ev string) int {
	t.Helper()
	ctx := context.Background()
	// Expire what is due first so the audit already shows it.
	a, err := s.Availability(ctx, ev)
	if err != nil {
		t.Fatal(err)
	}
	type owner struct {
		hold, order string
	}
	seats := map[string]owner{}
	holdSeats := map[string][]string{}
	orderHold := map[string]string{}
	gaHeld, gaSold := 0, 0
	holdQty := map[string]int{}
	n := 0
	after := ""
	for {
		p, err := s.Audit(ctx, ev, after, inventory.MaxAuditPage)
		if err != nil {
			t.Fatalf("Audit: %v", err)
		}
		for _, e := range p.Entries {
			n++
			switch e.Action {
			case inventory.ActionHold:
				holdSeats[e.HoldID] = e.Seats
				holdQty[e.HoldID] = e.Quantity
				if e.Pool != "" {
					gaHeld += e.Quantity
				}
				for _, seat := range e.Seats {
					if cur, taken := seats[seat]; taken {
						t.Fatalf("audit %s: seat %s held by %s while %+v has it", e.ID, seat, e.HoldID, cur)
					}
					seats[seat] = owner{hold: e.HoldID}
				}
			case inventory.ActionConfirm:
				orderHold[e.OrderID] = e.HoldID
				if e.Pool != "" {
					gaHeld -= e.Quantity
					gaSold += e.Quantity
				}
				for _, seat := range e.Seats {
					if cur := seats[seat]; cur.hold != e.HoldID || cur.order != "" {
						t.Fatalf("audit %s: seat %s confirmed for %s but its state is %+v", e.ID, seat, e.HoldID, cur)
					}
					seats[seat] = owner{hold: e.HoldID, order: e.OrderID}
				}
			case inventory.ActionRelease, inventory.ActionExpire:
				if e.Pool != "" {
					gaHeld -= e.Quantity
				}
				for _, seat := range e.Seats {
					if cur := seats[seat]; cur.hold != e.HoldID || cur.order != "" {
						t.Fatalf("audit %s: seat %s freed by %s %s but its state is %+v", e.ID, seat, e.Action, e.HoldID, cur)
					}
					delete(seats, seat)
				}
			case inventory.ActionCancel:
				if e.Pool != "" {
					gaSold -= e.Quantity
				}
				for _, seat := range e.Seats {
					if cur := seats[seat]; cur.order != e.OrderID {
						t.Fatalf("audit %s: seat %s cancelled with order %s but its state is %+v", e.ID, seat, e.OrderID, cur)
					}
					delete(seats, seat)
				}
			}
		}
		if len(p.Entries) == 0 {
			break
		}
		after = p.Next
	}
	held, sold := 0, 0
	for _, sec := range []string{"A", "B"} {
		m, err := s.SeatMap(ctx, ev, sec)
		if err != nil {
			t.Fatal(err)
		}
		for _, st := range m.Seats {
			o, taken := seats[st.ID]
			want := inventory.SeatAvailable
			switch {
			case taken && o.order != "":
				want = inventory.SeatSold
				sold++
			case taken:
				want = inventory.SeatHeld
				held++
			}
			if st.Status != want {
				t.Fatalf("seat %s is %s but the audit says %s (%+v)", st.ID, st.Status, want, o)
			}
		}
	}
	f := a.GA["floor"]
	if a.Sections["A"].Held+a.Sections["B"].Held != held || a.Sections["A"].Sold+a.Sections["B"].Sold != sold ||
		f.Held != gaHeld || f.Sold != gaSold {
		t.Fatalf("availability %+v disagrees with the audit (held %d sold %d, GA held %d sold %d)", a, held, sold, gaHeld, gaSold)
	}
	return n
}
