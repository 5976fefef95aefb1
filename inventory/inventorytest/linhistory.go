// The linearizability check's histories: RecordHistory runs concurrent
// clients against a store and records what each call returned; the model
// that judges them is in linearizability.go.

package inventorytest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/waitroom/waitroom/inventory"
)

// RecordHistory defines a fresh event on s and runs the clients against
// it, returning the history. Any error a correct store may not return
// fails t.
func RecordHistory(t *testing.T, s inventory.Store, opts LinearizabilityOptions) []porcupine.Operation {
	t.Helper()
	if opts.Clients == 0 {
		opts.Clients = 6
	}
	if opts.OpsPerClient == 0 {
		opts.OpsPerClient = 40
	}
	ctx := context.Background()
	ev := NewEventID()
	if _, err := s.PutEvent(ctx, ev, LinearizabilityEvent(), "lin"); err != nil {
		t.Fatal(err)
	}
	var (
		mu     sync.Mutex
		ops    []porcupine.Operation
		holds  []string
		orders []string
		wg     sync.WaitGroup
	)
	pick := func(rng *rand.Rand, list *[]string) string {
		mu.Lock()
		defer mu.Unlock()
		if len(*list) == 0 {
			return "hld_none"
		}
		// Favour recent ids: that is where the races are.
		n := len(*list)
		return (*list)[n-1-rng.IntN(min(n, 6))]
	}
	for c := range opts.Clients {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(opts.Seed+uint64(c), 99))
			user := fmt.Sprintf("u%d", c%4)
			for range opts.OpsPerClient {
				in := linInput{User: user}
				r := rng.IntN(100)
				switch {
				case r < 35:
					in.Kind = linHold
					a := rng.IntN(len(linSeats))
					in.Seats = []string{linSeats[a]}
					if rng.IntN(2) == 0 && a+1 < len(linSeats) {
						in.Seats = append(in.Seats, linSeats[a+1])
					}
				case r < 45:
					in.Kind, in.Qty = linHoldGA, 1+rng.IntN(2)
				case r < 65:
					in.Kind, in.Hold = linConfirm, pick(rng, &holds)
				case r < 78:
					in.Kind, in.Hold = linRelease, pick(rng, &holds)
				case r < 84:
					in.Kind, in.Order = linCancel, pick(rng, &orders)
					if in.Order == "hld_none" {
						in.Order = "ord_none"
					}
				case r < 84:
					in.Kind, in.Hold = linGet, pick(rng, &holds)
				case r < 94:
					in.Kind, in.Hold = linExtend, pick(rng, &holds)
				default:
					in.Kind = linAvail
				}
				switch rng.IntN(3) {
				case 0:
					in.TTL = 15
				case 1:
					in.TTL = 40
				default:
					in.TTL = 60_000
				}
				call := time.Now()
				out, err := runLin(ctx, s, ev, in)
				ret := time.Now()
				if err != nil {
					t.Errorf("%v: %v", in.Kind, err)
					return
				}
				in.Call, in.Ret = call.UnixMilli()-1, ret.UnixMilli()+1
				mu.Lock()
				ops = append(ops, porcupine.Operation{ClientId: c, Input: in, Call: call.UnixNano(), Output: out, Return: ret.UnixNano()})
				if out.Code == "" && out.Hold != "" && (in.Kind == linHold || in.Kind == linHoldGA) {
					holds = append(holds, out.Hold)
				}
				if out.Code == "" && in.Kind == linConfirm {
					orders = append(orders, out.Order)
				}
				mu.Unlock()
				// Pauses let short holds run out while others still
				// reach for them: that is where expiry races live.
				if rng.IntN(3) == 0 {
					time.Sleep(time.Duration(rng.IntN(30)) * time.Millisecond)
				}
			}
		})
	}
	wg.Wait()
	return ops
}

// runLin performs one operation and converts its result.
func runLin(ctx context.Context, s inventory.Store, ev string, in linInput) (linOutput, error) {
	var out linOutput
	var err error
	switch in.Kind {
	case linHold, linHoldGA:
		req := inventory.HoldRequest{User: in.User, Seats: in.Seats, TTL: time.Duration(in.TTL) * time.Millisecond}
		if in.Kind == linHoldGA {
			req.Seats, req.GA = nil, &inventory.GARequest{Pool: "G", Quantity: in.Qty}
		}
		var h inventory.Hold
		h, err = s.Hold(ctx, ev, req)
		out.Hold, out.At, out.Exp = h.ID, h.CreatedAt.UnixMilli(), h.ExpiresAt.UnixMilli()
	case linConfirm:
		var o inventory.Order
		o, err = s.Confirm(ctx, ev, in.Hold, inventory.ConfirmRequest{})
		out.Order, out.At = o.ID, o.ConfirmedAt.UnixMilli()
	case linRelease:
		var r inventory.Release
		r, err = s.Release(ctx, ev, in.Hold, inventory.ReleaseRequest{})
		out.Status = string(r.HoldStatus)
	case linCancel:
		var o inventory.Order
		o, err = s.Cancel(ctx, ev, in.Order, inventory.CancelRequest{})
		out.Status = string(o.Status)
		if o.CancelledAt != nil {
			out.At = o.CancelledAt.UnixMilli()
		}
	case linExtend:
		var h inventory.Hold
		h, err = s.Extend(ctx, ev, in.Hold, inventory.ExtendRequest{TTL: time.Duration(in.TTL) * time.Millisecond})
		out.Exp, out.Status = h.ExpiresAt.UnixMilli(), string(h.Status)
	case linGet:
		var h inventory.Hold
		h, err = s.GetHold(ctx, ev, in.Hold)
		out.Status, out.Order = string(h.Status), h.OrderID
	case linAvail:
		var a inventory.Availability
		a, err = s.Availability(ctx, ev)
		out.Counts = [2]inventory.Counts{a.Sections["H"], a.GA["G"].Counts}
	}
	if err != nil {
		code := inventory.Code(err)
		if code == "" || code == "unavailable" || code == "invalid_request" {
			return out, err
		}
		out = linOutput{Code: code}
		if code == "seat_unavailable" {
			out.Seats = inventory.Details(err).Seats
		}
	}
	return out, nil
}
