// Tests of the hold and checkout flow (checkout.go): holds of every kind,
// refusals, paying, double submits and racing tabs, expiry and release.

package demoshop

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/waitroom/waitroom/inventory"
)

func TestHoldKinds(t *testing.T) {
	h := newHarness(t)
	tests := []struct {
		name     string
		fields   url.Values
		contains []string
		held     int
	}{
		{"explicit seats", seats("lower-C-7", "lower-C-8"),
			[]string{"Lower bowl, row C, seat 7", "Lower bowl, row C, seat 8", "$178.00"}, 2},
		{"best available", best("upper", 3),
			[]string{"Upper tier, row K, seat 11", "Upper tier, row K, seat 12", "Upper tier, row K, seat 13", "$147.00"}, 3},
		{"general admission", ga("floor", 4), []string{"4 × Floor (standing)", "$260.00"}, 4},
	}
	total := 0
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			visitor := "visitor-" + string(rune('a'+i))
			hold := h.hold(visitor, tt.fields)
			total += tt.held
			r := h.get("/checkout/"+hold, visitor)
			wantPage(t, r, http.StatusOK, append(tt.contains, "Checkout", "no payment is taken",
				`data-seconds="180">3:00<`, `datetime="2030-05-01T18:03:00Z"`, "/static/countdown.js")...)
			g, err := h.inv.GetHold(bg, testEvent, hold)
			if err != nil || g.User != visitor || g.Status != inventory.HoldHeld || !g.ExpiresAt.Equal(h.clock.Now().Add(DefaultHoldTTL)) {
				t.Fatalf("hold %+v, %v", g, err)
			}
		})
	}
	h.wantCounts(total, 0)
}

func TestHoldDoubleSubmitHoldsOnce(t *testing.T) {
	h := newHarness(t)
	f := h.holdForm("alice", best("lower", 2))
	var locs []string
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			r := h.post("/events/"+testEvent+"/hold", "alice", f)
			mu.Lock()
			defer mu.Unlock()
			if r.status != http.StatusSeeOther {
				t.Errorf("status %d\n%s", r.status, r.body)
			}
			locs = append(locs, r.location())
		})
	}
	wg.Wait()
	if locs[0] != locs[1] || locs[1] != locs[2] {
		t.Fatalf("three submits of one form went to %v", locs)
	}
	h.wantCounts(2, 0)

	// The same form sent with another choice is a new hold.
	f.Set("quantity", "1")
	r := h.post("/events/"+testEvent+"/hold", "alice", f)
	if r.status != http.StatusSeeOther || r.location() == locs[0] {
		t.Fatalf("second choice: %d %q", r.status, r.location())
	}
	h.wantCounts(3, 0)
}

func TestHoldRefusals(t *testing.T) {
	h := newHarness(t)
	h.hold("bob", seats("lower-A-5", "lower-A-6"))
	h.hold("limit", ga("floor", 5))
	tests := []struct {
		name     string
		visitor  string
		fields   url.Values
		status   int
		contains []string
		absent   []string
	}{
		{"seats taken", "alice", seats("lower-A-4", "lower-A-5", "lower-A-6"), http.StatusConflict,
			[]string{"Sorry, those seats were just taken", "Lower bowl, row A, seat 5", "Lower bowl, row A, seat 6",
				`value="lower-A-4" aria-label="Row A, seat 4, available" checked>`, "Seat map: Lower bowl"},
			[]string{"Lower bowl, row A, seat 4</li>"}},
		{"one seat taken", "alice", seats("lower-A-5"), http.StatusConflict,
			[]string{"Sorry, that seat was just taken", "Lower bowl, row A, seat 5"}, nil},
		{"no such seat", "alice", seats("lower-Z-1", "lower-A-99"), http.StatusUnprocessableEntity,
			[]string{"No such seat", "Lower bowl, row Z, seat 1", "Lower bowl, row A, seat 99"}, nil},
		{"user limit", "limit", ga("floor", 2), http.StatusConflict,
			[]string{"Ticket limit reached", "at most 6 tickets", "you have 5", "You can add 1 more."}, nil},
		{"no seats ticked", "alice", seats(), http.StatusUnprocessableEntity,
			[]string{"Please check your choice", "Tick at least one seat"}, nil},
		{"bad seat id", "alice", seats("<b>x</b>"), http.StatusUnprocessableEntity,
			[]string{"not a seat of this venue"}, []string{"<b>x</b>"}},
		{"unknown section", "alice", best("vip", 2), http.StatusUnprocessableEntity, []string{"Choose a section."}, nil},
		{"bad quantity", "alice", best("lower", 0), http.StatusUnprocessableEntity, []string{"Choose how many seats"}, nil},
		{"no mode", "alice", url.Values{}, http.StatusUnprocessableEntity, []string{"Choose seats on the map"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := h.post("/events/"+testEvent+"/hold", tt.visitor, h.holdForm(tt.visitor, tt.fields))
			wantPage(t, r, tt.status, append(tt.contains, `role="alert"`)...)
			for _, a := range tt.absent {
				if strings.Contains(r.body, a) {
					t.Fatalf("page contains %q:\n%s", a, r.body)
				}
			}
		})
	}
	h.wantCounts(2+5, 0)
}

func TestNotEnoughLeft(t *testing.T) {
	h := newHarness(t)
	// Other buyers (straight through the sidecar, at most 6 each) take
	// every other seat of the upper tier, so no two free seats are next
	// to each other, and all but 3 standing tickets.
	n := 0
	take := func(req inventory.HoldRequest) {
		t.Helper()
		n++
		req.User = "filler-" + strconv.Itoa(n)
		if _, err := h.inv.Hold(bg, testEvent, req); err != nil {
			t.Fatal(err)
		}
	}
	for _, row := range Plan().Sections[1].Rows {
		var ids []string
		for seat := 2; seat <= row.Seats; seat += 2 {
			ids = append(ids, inventory.SeatID("upper", row.ID, seat))
			if len(ids) == 6 {
				take(inventory.HoldRequest{Seats: ids})
				ids = nil
			}
		}
	}
	for range 97 / 6 {
		take(inventory.HoldRequest{GA: &inventory.GARequest{Pool: "floor", Quantity: 6}})
	}
	take(inventory.HoldRequest{GA: &inventory.GARequest{Pool: "floor", Quantity: 97 % 6}})

	tests := []struct {
		name     string
		fields   url.Values
		contains []string
	}{
		{"best available", best("upper", 2), []string{"Not enough seats together",
			"We could not find 2 seats next to each other in Upper tier (120 seats are left there)."}},
		{"standing", ga("floor", 4), []string{"Not enough tickets left", "Only 3 tickets are left for Floor (standing)."}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := h.post("/events/"+testEvent+"/hold", "alice", h.holdForm("alice", tt.fields))
			wantPage(t, r, http.StatusConflict, tt.contains...)
		})
	}
	h.wantCounts(120+97, 0)
	// One seat alone is still there.
	h.hold("alice", best("upper", 1))
}

func TestPay(t *testing.T) {
	h := newHarness(t)
	hold := h.hold("alice", seats("lower-D-1", "lower-D-2"))
	f := h.payForm("alice", hold)

	// A double submit: both answers lead to the one order.
	var wg sync.WaitGroup
	results := make([]resp, 2)
	for i := range results {
		wg.Go(func() { results[i] = h.post("/checkout/"+hold+"/pay", "alice", f) })
	}
	wg.Wait()
	for _, r := range results {
		if r.status != http.StatusSeeOther || !strings.HasPrefix(r.location(), "/tickets/ord_") {
			t.Fatalf("pay: %d %q\n%s", r.status, r.location(), r.body)
		}
		if r.header.Get(HeaderComplete) != "1" {
			t.Fatalf("no %s on a successful payment", HeaderComplete)
		}
	}
	if results[0].location() != results[1].location() {
		t.Fatalf("a double submit made two orders: %s, %s", results[0].location(), results[1].location())
	}
	order := strings.TrimPrefix(results[0].location(), "/tickets/")
	h.wantCounts(0, 2)

	o, err := h.inv.GetOrder(bg, testEvent, order)
	if err != nil || o.User != "alice" || o.HoldID != hold || o.PriceCents != 17800 || o.Status != inventory.OrderConfirmed {
		t.Fatalf("order %+v, %v", o, err)
	}
	// The second submit was charged too when it read the hold before the
	// first confirmed it, with the same key: one payment either way.
	charges, refunds := h.pay.calls()
	if len(charges) < 1 || len(charges) > 2 || charges[0].Key != charges[len(charges)-1].Key ||
		charges[0].AmountCents != 17800 || len(refunds) != 0 {
		t.Fatalf("charges %+v, refunds %+v", charges, refunds)
	}
	if !strings.HasPrefix(o.PaymentRef, "demo_pay_") {
		t.Fatalf("payment ref %q", o.PaymentRef)
	}
	confirms := 0
	p, _ := h.inv.Audit(bg, testEvent, "", inventory.MaxAuditPage)
	for _, e := range p.Entries {
		if e.Action == inventory.ActionConfirm {
			confirms++
		}
	}
	if confirms != 1 {
		t.Fatalf("%d confirms in the audit stream", confirms)
	}

	// A retry later (the answer was lost) gets the same order again.
	r := h.post("/checkout/"+hold+"/pay", "alice", f)
	if r.status != http.StatusSeeOther || r.location() != results[0].location() {
		t.Fatalf("retry: %d %q", r.status, r.location())
	}
	// And the checkout of a paid hold shows the ticket.
	if r := h.get("/checkout/"+hold, "alice"); r.status != http.StatusSeeOther || r.location() != "/tickets/"+order {
		t.Fatalf("checkout of a paid hold: %d %q", r.status, r.location())
	}
	if !strings.Contains(h.logs.String(), "fake payment taken") {
		t.Fatal("the fake payment was not logged")
	}
}

func TestPayFromTwoTabsChargesOnce(t *testing.T) {
	h := newHarness(t)
	hold := h.hold("alice", ga("floor", 2))
	tab1, tab2 := h.payForm("alice", hold), h.payForm("alice", hold)
	if tab1.Get("key") == tab2.Get("key") {
		t.Fatal("two renders of the checkout share a form key")
	}
	r1 := h.post("/checkout/"+hold+"/pay", "alice", tab1)
	// The second tab's hold is confirmed by now: the page sends it to the
	// ticket without charging.
	r2 := h.post("/checkout/"+hold+"/pay", "alice", tab2)
	if r1.location() == "" || r1.location() != r2.location() {
		t.Fatalf("two tabs: %q, %q", r1.location(), r2.location())
	}
	charges, refunds := h.pay.calls()
	if len(charges) != 1 || len(refunds) != 0 {
		t.Fatalf("charges %+v, refunds %+v", charges, refunds)
	}
	h.wantCounts(0, 2)
}

func TestPayRacingTabsRefundsTheLoser(t *testing.T) {
	h := newHarness(t)
	hold := h.hold("alice", ga("floor", 1))
	tab1, tab2 := h.payForm("alice", hold), h.payForm("alice", hold)
	// Tab 2 is paid for while tab 1's payment is being taken: the hold
	// is confirmed once, and tab 1's charge is refunded.
	h.pay.setHook(func() {
		h.pay.setHook(nil)
		r := h.post("/checkout/"+hold+"/pay", "alice", tab2)
		if r.status != http.StatusSeeOther {
			t.Errorf("tab 2: %d\n%s", r.status, r.body)
		}
	})
	r := h.post("/checkout/"+hold+"/pay", "alice", tab1)
	if r.status != http.StatusSeeOther || !strings.HasPrefix(r.location(), "/tickets/") {
		t.Fatalf("tab 1: %d %q\n%s", r.status, r.location(), r.body)
	}
	charges, refunds := h.pay.calls()
	if len(charges) != 2 || len(refunds) != 1 || refunds[0].Reason != "the hold was already paid for" || refunds[0].AmountCents != 6500 {
		t.Fatalf("charges %+v, refunds %+v", charges, refunds)
	}
	o, err := h.inv.GetOrder(bg, testEvent, strings.TrimPrefix(r.location(), "/tickets/"))
	if err != nil || o.PaymentRef == refunds[0].Ref {
		t.Fatalf("order %+v, %v: the refunded payment is the order's", o, err)
	}
	h.wantCounts(0, 1)
}

func TestDoubleSubmitWithDistinctPaymentRefs(t *testing.T) {
	h := newHarness(t)
	h.pay.distinctRefs = true
	hold := h.hold("alice", seats("upper-M-1", "upper-M-2"))
	f := h.payForm("alice", hold)
	// The second submit of the same form overtakes the first while the
	// first is being charged: one key, two payment references.
	var second resp
	h.pay.setHook(func() {
		h.pay.setHook(nil)
		second = h.post("/checkout/"+hold+"/pay", "alice", f)
	})
	first := h.post("/checkout/"+hold+"/pay", "alice", f)
	for _, r := range []resp{first, second} {
		if r.status != http.StatusSeeOther || !strings.HasPrefix(r.location(), "/tickets/") || r.header.Get(HeaderComplete) != "1" {
			t.Fatalf("pay: %d %q\n%s", r.status, r.location(), r.body)
		}
	}
	if first.location() != second.location() {
		t.Fatalf("two orders: %s, %s", first.location(), second.location())
	}
	charges, refunds := h.pay.calls()
	o, err := h.inv.GetOrder(bg, testEvent, strings.TrimPrefix(first.location(), "/tickets/"))
	if err != nil || len(charges) != 2 || len(refunds) != 1 || refunds[0].Ref == o.PaymentRef || refunds[0].AmountCents != 9800 {
		t.Fatalf("order %+v (%v), charges %+v, refunds %+v", o, err, charges, refunds)
	}
	h.wantCounts(0, 2)
}

func TestHoldExpiresWhilePaying(t *testing.T) {
	h := newHarness(t)
	hold := h.hold("alice", seats("lower-E-10", "lower-E-11"))
	f := h.payForm("alice", hold)
	// The payment takes longer than the hold lasts.
	h.pay.setHook(func() { h.clock.Add(DefaultHoldTTL + time.Second) })
	r := h.post("/checkout/"+hold+"/pay", "alice", f)
	wantPage(t, r, http.StatusConflict, "Your hold expired while you paid", "The payment of $178.00 was refunded",
		"18:03:00 UTC", `href="/events/demo-concert"`)
	if r.header.Get(HeaderComplete) != "" {
		t.Fatalf("%s on a failed payment", HeaderComplete)
	}
	charges, refunds := h.pay.calls()
	if len(charges) != 1 || len(refunds) != 1 || refunds[0].AmountCents != 17800 || refunds[0].Reason != "hold_expired" {
		t.Fatalf("charges %+v, refunds %+v", charges, refunds)
	}
	h.wantCounts(0, 0)
	if g, _ := h.inv.GetHold(bg, testEvent, hold); g.Status != inventory.HoldExpired {
		t.Fatalf("hold status %s", g.Status)
	}
	if !strings.Contains(h.logs.String(), "fake payment refunded") {
		t.Fatal("the refund was not logged")
	}

	// The seats are for sale again.
	h.pay.setHook(nil)
	h.buy("bob", seats("lower-E-10", "lower-E-11"))
}

// TestPayExtendsTheHold: submitting the payment extends the hold first,
// so a payment that takes most of a TTL still ends in an order.
func TestPayExtendsTheHold(t *testing.T) {
	h := newHarness(t)
	hold := h.hold("alice", ga("floor", 2))
	f := h.payForm("alice", hold)
	h.clock.Add(100 * time.Second) // reading the form
	h.pay.setHook(func() { h.clock.Add(DefaultHoldTTL - time.Second) })
	r := h.post("/checkout/"+hold+"/pay", "alice", f)
	if r.status != http.StatusSeeOther || !strings.HasPrefix(r.location(), "/tickets/") {
		t.Fatalf("a slow payment: %d %q\n%s", r.status, r.location(), r.body)
	}
	if _, refunds := h.pay.calls(); len(refunds) != 0 {
		t.Fatalf("refunded %+v", refunds)
	}
	h.wantCounts(0, 2)
}

func TestPayAfterExpiryChargesNothing(t *testing.T) {
	h := newHarness(t)
	hold := h.hold("alice", ga("floor", 1))
	f := h.payForm("alice", hold)
	h.clock.Add(DefaultHoldTTL)
	wantPage(t, h.post("/checkout/"+hold+"/pay", "alice", f), http.StatusGone, "Your hold has expired", "Nothing was charged")
	wantPage(t, h.get("/checkout/"+hold, "alice"), http.StatusGone, "Your hold has expired")
	if charges, _ := h.pay.calls(); len(charges) != 0 {
		t.Fatalf("charged %+v", charges)
	}
	h.wantCounts(0, 0)
}

func TestCheckoutCountdown(t *testing.T) {
	h := newHarness(t)
	hold := h.hold("alice", ga("floor", 1))
	h.clock.Add(100*time.Second + 500*time.Millisecond)
	// Each load of the checkout extends the hold a TTL from now ...
	wantPage(t, h.get("/checkout/"+hold, "alice"), http.StatusOK, `data-seconds="180">3:00<`,
		`<script src="/_wr/session.js?event=`+testEvent+`" defer></script>`)
	h.clock.Add(150 * time.Second)
	wantPage(t, h.get("/checkout/"+hold, "alice"), http.StatusOK, `data-seconds="180">3:00<`)
	// ... up to the event's maximum hold time (3 TTLs from the hold).
	h.clock.Add(150 * time.Second)
	wantPage(t, h.get("/checkout/"+hold, "alice"), http.StatusOK, `data-seconds="140"`)
	h.clock.Add(140 * time.Second)
	wantPage(t, h.get("/checkout/"+hold, "alice"), http.StatusGone, "Your hold has expired")
	h.wantCounts(0, 0)
}

func TestRelease(t *testing.T) {
	h := newHarness(t)
	hold := h.hold("alice", seats("upper-T-1", "upper-T-2"))
	csrf, _ := formFields(t, h.get("/checkout/"+hold, "alice").body)
	r := h.post("/checkout/"+hold+"/release", "alice", url.Values{"csrf": {csrf}})
	if r.status != http.StatusSeeOther || r.location() != "/events/demo-concert?notice=released" {
		t.Fatalf("release: %d %q", r.status, r.location())
	}
	h.wantCounts(0, 0)
	page := h.get(r.location(), "alice")
	wantPage(t, page, http.StatusOK, "Your seats were released and are back on sale.")
	if strings.Contains(page.body, "Held for you") {
		t.Fatal("a released hold is offered for checkout")
	}
	wantPage(t, h.get("/checkout/"+hold, "alice"), http.StatusGone, "These seats were released")
	// Releasing again changes nothing and says so the same way.
	if r := h.post("/checkout/"+hold+"/release", "alice", url.Values{"csrf": {csrf}}); r.status != http.StatusSeeOther {
		t.Fatalf("second release: %d", r.status)
	}
}
