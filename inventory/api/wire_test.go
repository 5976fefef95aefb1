package api

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/waitroom/waitroom/inventory"
)

func TestWireMatchesEncodingJSON(t *testing.T) {
	now := time.Unix(1795313800, 507000000).UTC()
	later := now.Add(8 * time.Minute)
	holds := []inventory.Hold{
		{ID: "hld_a", Event: "ev", User: "u\"<1>", Seats: []string{"A-1-1", "A-1-2"}, Quantity: 2, PriceCents: 300, CreatedAt: now, ExpiresAt: later, Status: inventory.HoldHeld},
		{ID: "hld_b", Event: "ev", User: "é", Seats: []string{}, Pool: "floor", Quantity: 3, CreatedAt: now, ExpiresAt: later, Status: inventory.HoldConfirmed, OrderID: "ord_x"},
	}
	for _, h := range holds {
		want, _ := json.Marshal(h)
		if got := appendHold(nil, &h); string(got) != string(want) {
			t.Errorf("hold:\n got %s\nwant %s", got, want)
		}
	}
	orders := []inventory.Order{
		{ID: "ord_a", HoldID: "hld_a", Event: "ev", User: "u1", Seats: []string{"A-1-1"}, Quantity: 1, PriceCents: 5, PaymentRef: "pay&1", Status: inventory.OrderConfirmed, ConfirmedAt: now},
		{ID: "ord_b", HoldID: "hld_b", Event: "ev", User: "u1", Seats: []string{}, Pool: "floor", Quantity: 2, Status: inventory.OrderCancelled, ConfirmedAt: now, CancelledAt: &later},
	}
	for _, o := range orders {
		want, _ := json.Marshal(o)
		if got := appendOrder(nil, &o); string(got) != string(want) {
			t.Errorf("order:\n got %s\nwant %s", got, want)
		}
	}
}
