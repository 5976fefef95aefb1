package ledger_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/waitroom/waitroom/internal/testkit/fakeclock"
	"github.com/waitroom/waitroom/internal/testkit/redistest"
	"github.com/waitroom/waitroom/inventory"
	"github.com/waitroom/waitroom/inventory/ledger"
	"github.com/waitroom/waitroom/inventory/memstore"
	"github.com/waitroom/waitroom/inventory/redisstore"
)

var ctx = context.Background()

// stores are the real stores the ledger runs against.
func stores(t *testing.T) map[string]func(t *testing.T) inventory.Store {
	srv := redistest.Start(t, redistest.Options{AppendOnly: true})
	return map[string]func(t *testing.T) inventory.Store{
		"memstore": func(t *testing.T) inventory.Store {
			s, err := memstore.Open(memstore.Options{Dir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		},
		"redisstore": func(t *testing.T) inventory.Store {
			s, err := redisstore.New(ctx, redisstore.Options{Client: srv.Client()})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		},
	}
}

func must[T any](t *testing.T) func(T, error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

// sell sets up an event with a sale history: two rows of five seats and
// a GA pool; order 1 (A-1-1, A-1-2) sold, order 2 (A-1-3) sold and
// cancelled, A-2-1 held, A-2-2 held and released, 3 GA places sold.
// It returns the orders that stand: seat → order id.
func sell(t *testing.T, s inventory.Store, ev string) map[string]string {
	def := inventory.EventDef{
		Sections: []inventory.Section{{ID: "A", PriceCents: 5000, Rows: []inventory.Row{{ID: "1", Seats: 5}, {ID: "2", Seats: 5}}}},
		GA:       []inventory.Pool{{ID: "floor", Capacity: 10, PriceCents: 3000}},
	}
	must[inventory.Event](t)(s.PutEvent(ctx, ev, def, "test"))
	hold := func(req inventory.HoldRequest) inventory.Hold {
		t.Helper()
		return must[inventory.Hold](t)(s.Hold(ctx, ev, req))
	}
	confirm := func(h inventory.Hold) inventory.Order {
		t.Helper()
		return must[inventory.Order](t)(s.Confirm(ctx, ev, h.ID, inventory.ConfirmRequest{PaymentRef: "pay-" + h.ID}))
	}
	o1 := confirm(hold(inventory.HoldRequest{User: "u1", Seats: []string{"A-1-1", "A-1-2"}}))
	o2 := confirm(hold(inventory.HoldRequest{User: "u2", Seats: []string{"A-1-3"}}))
	must[inventory.Order](t)(s.Cancel(ctx, ev, o2.ID, inventory.CancelRequest{Reason: "refund"}))
	hold(inventory.HoldRequest{User: "u3", Seats: []string{"A-2-1"}})
	h := hold(inventory.HoldRequest{User: "u4", Seats: []string{"A-2-2"}})
	must[inventory.Release](t)(s.Release(ctx, ev, h.ID, inventory.ReleaseRequest{}))
	confirm(hold(inventory.HoldRequest{User: "u5", GA: &inventory.GARequest{Pool: "floor", Quantity: 3}}))
	return map[string]string{"A-1-1": o1.ID, "A-1-2": o1.ID}
}

// TestExport: the export of an event with a sale history is its
// definition, every seat in its state, the pool's counts, the one live
// hold and all three orders in their states now (in audit order), and
// the audit position at the stream's last entry; on both stores.
func TestExport(t *testing.T) {
	for name, open := range stores(t) {
		t.Run(name, func(t *testing.T) {
			s := open(t)
			sell(t, s, "show")
			var b bytes.Buffer
			sum, err := ledger.Export(ctx, s, "show", &b)
			if err != nil {
				t.Fatal(err)
			}
			var lines []ledger.Line
			sc := bufio.NewScanner(&b)
			for sc.Scan() {
				var l ledger.Line
				dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
				dec.DisallowUnknownFields()
				if err := dec.Decode(&l); err != nil {
					t.Fatalf("line %d: %v: %s", len(lines)+1, err, sc.Bytes())
				}
				lines = append(lines, l)
			}
			var types []string
			seats := map[string]inventory.SeatStatus{}
			orders := map[inventory.OrderStatus]int{}
			for _, l := range lines {
				if len(types) == 0 || types[len(types)-1] != l.Type {
					types = append(types, l.Type)
				}
				switch l.Type {
				case ledger.TypeSeat:
					seats[l.Seat.ID] = l.Seat.Status
				case ledger.TypeOrder:
					orders[l.Order.Status]++
				case ledger.TypeHold:
					if !reflect.DeepEqual(l.Hold.Seats, []string{"A-2-1"}) || l.Hold.Status != inventory.HoldHeld {
						t.Errorf("hold line = %+v, want the live hold of A-2-1", l.Hold)
					}
				case ledger.TypePool:
					if l.Pool.ID != "floor" || l.Pool.Capacity != 10 || l.Pool.Sold != 3 || l.Pool.Available != 7 {
						t.Errorf("pool line = %+v", l.Pool)
					}
				}
			}
			if want := []string{"event", "seat", "pool", "order", "hold", "order", "audit"}; !reflect.DeepEqual(types, want) {
				t.Fatalf("line types in order %v, want %v", types, want)
			}
			want := map[string]inventory.SeatStatus{"A-1-1": "sold", "A-1-2": "sold", "A-2-1": "held"}
			for _, row := range []string{"1", "2"} {
				for n := 1; n <= 5; n++ {
					id := fmt.Sprintf("A-%s-%d", row, n)
					if st, ok := want[id]; ok {
						if seats[id] != st {
							t.Errorf("seat %s %s, want %s", id, seats[id], st)
						}
					} else if seats[id] != inventory.SeatAvailable {
						t.Errorf("seat %s %s, want available", id, seats[id])
					}
				}
			}
			if len(seats) != 10 || orders[inventory.OrderConfirmed] != 2 || orders[inventory.OrderCancelled] != 1 {
				t.Fatalf("%d seats, orders by status %v; want 10, 2 confirmed and 1 cancelled", len(seats), orders)
			}
			page := must[inventory.AuditPage](t)(s.Audit(ctx, "show", "", inventory.MaxAuditPage))
			last := lines[len(lines)-1].Audit
			if last.Last != page.Entries[len(page.Entries)-1].ID || last.Entries != len(page.Entries) || sum.Position != *last {
				t.Fatalf("audit position %+v (summary %+v), want the last of %d entries, %q", last, sum.Position, len(page.Entries), page.Entries[len(page.Entries)-1].ID)
			}
			if sum.Seats != 10 || sum.Pools != 1 || sum.Holds != 1 || sum.Orders != 3 {
				t.Fatalf("summary = %+v", sum)
			}
		})
	}
}

// TestExportAfterRetention: holds released or expired longer ago than
// the store keeps them are gone from the store but not from the audit;
// the export skips them (they hold nothing) instead of failing.
func TestExportAfterRetention(t *testing.T) {
	clk := fakeclock.New(time.Now())
	s, err := memstore.Open(memstore.Options{Dir: t.TempDir(), Clock: clk.Now, HoldRetention: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	sell(t, s, "show")
	clk.Add(time.Hour)
	if _, err := s.GetHold(ctx, "show", must[inventory.AuditPage](t)(s.Audit(ctx, "show", "", inventory.MaxAuditPage)).Entries[0].HoldID); !errors.Is(err, inventory.ErrHoldNotFound) {
		t.Fatalf("a hold past retention: %v, want ErrHoldNotFound (the case under test)", err)
	}
	sum, err := ledger.Export(ctx, s, "show", io.Discard)
	if err != nil {
		t.Fatalf("export after the retention: %v", err)
	}
	if sum.Holds != 0 || sum.Orders != 3 {
		t.Fatalf("summary = %+v, want no live hold (A-2-1's expired) and the 3 orders", sum)
	}
}

// TestReconcile: the origin's orders agree with the sidecar when they
// name the seats of the orders that stand (a cancelled order's seat and
// GA places are not sold seats); a seat missing from the file and a seat
// the sidecar never sold are each reported with their order.
func TestReconcile(t *testing.T) {
	for name, open := range stores(t) {
		t.Run(name, func(t *testing.T) {
			s := open(t)
			sold := sell(t, s, "show")
			var o1 string
			for _, id := range sold {
				o1 = id
			}
			agree := fmt.Sprintf(`{"order_id":"shop-1","seats":["A-1-1","A-1-2"],"total":100}` + "\n\n" + `{"order_id":"shop-3","seats":[]}` + "\n")
			res := reconcile(t, s, agree)
			if !res.Agree() || res.SidecarSeats != 2 || res.SidecarOrders != 2 || res.OriginSeats != 2 || res.OriginOrders != 2 {
				t.Fatalf("agreeing orders: %+v", res)
			}
			differ := "order_id,seat,price\nshop-1,A-1-1,50\nshop-9,A-2-5,50\n"
			res = reconcile(t, s, differ)
			if res.Agree() ||
				!reflect.DeepEqual(res.OnlySidecar, []ledger.Mismatch{{Seat: "A-1-2", Order: o1}}) ||
				!reflect.DeepEqual(res.OnlyOrigin, []ledger.Mismatch{{Seat: "A-2-5", Order: "shop-9"}}) {
				t.Fatalf("differing orders: %+v", res)
			}
			var text strings.Builder
			if err := res.WriteText(&text); err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{"A-1-2 (sidecar order " + o1 + ")", "A-2-5 (order shop-9)", "they disagree: 1 seats only in the sidecar, 1 only in the orders"} {
				if !strings.Contains(text.String(), want) {
					t.Fatalf("text lacks %q:\n%s", want, text.String())
				}
			}
			if _, err := ledger.Reconcile(ctx, s, "nope", &ledger.Orders{}); !errors.Is(err, inventory.ErrEventNotFound) {
				t.Fatalf("unknown event: %v", err)
			}
		})
	}
}

func reconcile(t *testing.T, s inventory.Store, file string) *ledger.Result {
	t.Helper()
	o, err := ledger.ReadOrders(strings.NewReader(file))
	if err != nil {
		t.Fatal(err)
	}
	res, err := ledger.Reconcile(ctx, s, "show", o)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestReadOrders(t *testing.T) {
	good := map[string]map[string]string{
		"":     {},
		"  \n": {},
		`{"order_id":"o1","seats":["A-1","A-2"]}`: {"A-1": "o1", "A-2": "o1"},
		"\ufeff" + `{"order_id":"o1","seats":["A-1"]}` + "\r\n" + `{"order_id":"o2","seats":["B-1"],"x":{"y":1}}`: {"A-1": "o1", "B-1": "o2"},
		"order_id,seat\no1,A-1\no1,A-2\no2, B-1 \n":                                                               {"A-1": "o1", "A-2": "o1", "B-1": "o2"},
		"Seats,ORDER_ID\n\"A-1 A-2;A-3\",o1\n":                                                                    {"A-1": "o1", "A-2": "o1", "A-3": "o1"},
		"order_id,seat\no1,A-1\no1,A-1\n":                                                                         {"A-1": "o1"},
	}
	for in, want := range good {
		o, err := ledger.ReadOrders(strings.NewReader(in))
		if err != nil || !reflect.DeepEqual(o.Seats, want) {
			t.Errorf("ReadOrders(%q) = %v, %v; want %v", in, o, err, want)
		}
	}
	bad := []string{
		`{"order_id":"o1","seats":["A-1"]} {}`,
		`{"seats":["A-1"]}`,
		`{"order_id":"","seats":["A-1"]}`,
		`{"order_id":"o1","seats":["A-1"]}` + "\n" + `{"order_id":"o2","seats":["A-1"]}`,
		`{"order_id":"o1","seats":["A` + "\x01" + `"]}`,
		`{"order_id":"o1","seats":"A-1"}`,
		"order_id,price\no1,5\n",
		"order_id,seat,seats\no1,A,B\n",
		"order_id,seat\no1\n",
		"order_id,seat\no1,\n",
		"order_id,seat\no1,\"A\n",
		"seat\nA-1\n",
	}
	for _, in := range bad {
		if _, err := ledger.ReadOrders(strings.NewReader(in)); !errors.Is(err, ledger.ErrOrdersFile) {
			t.Errorf("ReadOrders(%q): %v, want ErrOrdersFile", in, err)
		}
	}
}

// FuzzReadOrders: any input is read or refused with ErrOrdersFile; what
// is read names each seat once, with valid ids.
func FuzzReadOrders(f *testing.F) {
	for _, s := range []string{`{"order_id":"o1","seats":["A-1","A-2"]}`, "order_id,seat\no1,A-1\n", "seats,order_id\n\"A B\",o\n", "", "{"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		o, err := ledger.ReadOrders(strings.NewReader(in))
		if err != nil {
			if !errors.Is(err, ledger.ErrOrdersFile) {
				t.Fatalf("error %v does not wrap ErrOrdersFile", err)
			}
			return
		}
		for seat, order := range o.Seats {
			if seat == "" || order == "" || len(seat) > ledger.MaxIDLen || len(order) > ledger.MaxIDLen {
				t.Fatalf("read seat %q of order %q", seat, order)
			}
		}
		if o.Orders < 0 || (len(o.Seats) > 0 && o.Orders == 0) {
			t.Fatalf("%d orders for %d seats", o.Orders, len(o.Seats))
		}
	})
}
