package admission_test

import (
	"math/rand/v2"
	"testing"

	"github.com/waitroom/waitroom/admission"
)

// TestSeatsLeft: an event linked to an inventory reports what the
// inventory says now; one without a link, or an unknown event, reports
// nothing known.
func TestSeatsLeft(t *testing.T) {
	linked, plain := event("show"), event("other")
	linked.InventoryEvent = "show-seats"
	r := newRig(t, linked, plain)
	inv := &inventory{left: 7}
	e, err := admission.New(admission.Options{Store: r.store, Clock: r.clk.Now, Meter: r.meter, Inventory: inv,
		Rand: rand.NewChaCha8([32]byte{3}), Replica: "seats"}, linked, plain)
	if err != nil {
		t.Fatal(err)
	}
	if n, ok := e.SeatsLeft("show"); !ok || n != 7 {
		t.Fatalf("SeatsLeft(show) = %d, %v; want 7, true", n, ok)
	}
	inv.mu.Lock()
	inv.left = 2
	inv.mu.Unlock()
	if n, ok := e.SeatsLeft("show"); !ok || n != 2 {
		t.Fatalf("after a sale SeatsLeft(show) = %d, %v; want 2, true", n, ok)
	}
	for _, id := range []string{"other", "nope"} {
		if n, ok := e.SeatsLeft(id); ok || n != 0 {
			t.Fatalf("SeatsLeft(%s) = %d, %v; want nothing known", id, n, ok)
		}
	}
	if n, ok := r.e.SeatsLeft("show"); ok {
		t.Fatalf("an engine without an inventory knows %d seats", n)
	}
}
